"""The dashboard's views: each parses its input, calls one service function, and renders or redirects.

A view is a plain function ``(app, request, caller)`` for a page, or
``(app, request, caller, form)`` for a form post; ``dashboard.py`` wraps it
with the login check, the CSRF check and the worker thread.
"""
