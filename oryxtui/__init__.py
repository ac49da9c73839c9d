"""oryxtui: see and steer what an AI agent remembers."""

__version__ = "0.1.0"
