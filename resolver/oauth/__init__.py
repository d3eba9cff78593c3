"""OAuth 2.1 for the MCP door over HTTP.

The authorization server is django-oauth-toolkit in this same site (its views
under /oauth/, its RFC 8414 metadata at the origin's well-known URL, the
site's login and the app's consent page `resolver/oauth/authorize.html`,
its settings from `provider.oauth2_provider_settings`).
This package holds the resource server's side: which URL is the protected
resource, and which bearer tokens it accepts (`resource.py`).
"""
