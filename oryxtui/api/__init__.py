"""The REST API over the same services the CLI and the dashboard use (`oryxtui serve`)."""
