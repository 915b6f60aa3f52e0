"""The shared service of the fronts (layer 6): the session store, the provider pool and the kernel's configuration,
built from the environment. Transport-agnostic: the stdio daemon and the ACP front both drive runs through it."""
