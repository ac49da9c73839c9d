"""The dashboard's widgets: the agent list, the memory view and its panes, chat, prompt."""
