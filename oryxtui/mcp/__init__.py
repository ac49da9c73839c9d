"""Any agent, not only OryxOS's: the memory as an MCP server (the official `mcp` SDK, the `mcp`
extra). `tools` are what a client may call, `server` is one agent's server (tools, resources
with subscriptions), `stdio` runs it for a client that launches it, `http` serves it at `/mcp`
of `oryxtui serve` behind the same keys and guard as the REST API."""
