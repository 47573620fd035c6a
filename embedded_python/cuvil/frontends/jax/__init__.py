"""The JAX front end: a jaxpr walked equation by equation into Cuvil IR."""
