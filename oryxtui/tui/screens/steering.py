"""The changes the dashboard makes to the memory shown: what each key does to the memory view,
and what each change is called when the reach of the memory shown refuses it."""

from __future__ import annotations

from operator import methodcaller

# What `steer` does to the memory view, by name (the entry keys, R, A, e and /).
STEERS = {
    "edit_entry": methodcaller("edit_entry"),
    "replace_entry": methodcaller("replace_entry"),
    "move_entry": methodcaller("move_entry"),
    "delete_entry": methodcaller("delete_entry"),
    "remove_duplicates": methodcaller("remove_duplicates"),
    "restore": methodcaller("settle_lost", accept=False),
    "accept": methodcaller("settle_lost", accept=True),
    "edit_file": methodcaller("edit_file"),
    "filter": methodcaller("open_filter"),
}
# The actions that change the memory shown, with what each is called in a refusal.
CHANGES = {
    "save_entry": "saving",
    "edit_entry": "editing an entry",
    "replace_entry": "replacing an entry",
    "move_entry": "moving an entry",
    "delete_entry": "deleting an entry",
    "consolidate": "writing a digest",
    "restore": "bringing entries back",
    "accept": "accepting a removal",
    "chat": "chatting (a turn saves to memory)",
}
