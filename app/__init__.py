"""LayoutLab web application (FastAPI + Jinja2 + HTMX)."""
