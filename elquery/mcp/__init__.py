"""elquery's MCP server (docs/mcp.md): the service's answers as tools for language-model agents,
over stdio (``elquery mcp``) and streamable HTTP (``elquery mcp --transport http``, and ``/mcp`` on
``elquery serve``), on the official ``mcp`` package's :class:`~mcp.server.MCPServer`."""
