"""HTML views: one self-contained page per run (``run_page``) and per HLO diff (``diff_page``).

Templates live in ``xlacli/render/templates/``; charts are inline SVG (``svg``).
"""
