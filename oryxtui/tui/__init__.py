"""The Textual dashboard over the memory engine."""
