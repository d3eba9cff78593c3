"""The MCP door: the resolver as tools for AI agents (resolver.mcp.server)."""
