"""HTTP routes: api_*.py answer JSON, pages_*.py answer HTML pages and HTMX fragments."""
