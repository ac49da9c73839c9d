"""Working against oryxtui servers over their REST API and event stream, as locally."""
