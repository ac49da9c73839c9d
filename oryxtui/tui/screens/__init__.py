"""The dashboard's screens: the dashboard itself, and the views and dialogs opened over it."""
