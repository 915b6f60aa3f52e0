"""The vocabulary every layer shares: errors, messages, events and tool kinds. Imports nothing else of kgent."""
