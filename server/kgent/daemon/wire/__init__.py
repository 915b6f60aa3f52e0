"""`python -m kgent.daemon.wire`: the generator of protocol.schema.json and the VS Code shim's types. The wire models
themselves live in kgent.service.wire (layer 6), shared by the stdio daemon and the HTTP front."""
