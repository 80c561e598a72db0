"""Local stand-ins for Microsoft Entra ID and FoundationaLLM CoreAPI (dev and test only).

The portal never imports this package; it reaches these servers over HTTP exactly as
it reaches the real ones.
"""
