"""The clarification page: a search form, signed clarification links, and the selection."""
