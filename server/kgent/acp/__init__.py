"""`kgent acp`: the Agent Client Protocol front (ACP v1 over stdio, newline-delimited JSON-RPC) on the shared
service. The SDK (`agent-client-protocol`) owns the JSON-RPC layer and the wire models; this package only maps."""
