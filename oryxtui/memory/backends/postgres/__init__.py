"""The `sqlite` backend on a shared PostgreSQL database (`[database] url`): upstream's
`memory_entries`, the history in a table, changes announced by LISTEN/NOTIFY."""
