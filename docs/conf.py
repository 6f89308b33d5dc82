"""Sphinx configuration of the results site (``python -m fedlib.lab.site``, ``./run_all.sh --site``).

The builder writes the pages (the READMEs' sections and the executed notebooks) into ``site/src/`` and runs
``sphinx-build -c docs`` on them, so this file is the site's one configuration. The site works offline: it loads
no script from outside itself.

- Notebooks are rendered as executed (``nb_execution_mode = "off"``): the site never trains.
- Widget outputs (tqdm's notebook progress bars) and the notebooks' widget state are stripped by the builder
  (:func:`fedlib.lab.site.strip_widgets`), and ``nb_ipywidgets_js`` is empty, so MyST-NB adds no require.js or
  ``@jupyter-widgets/html-manager`` script from a public CDN. A page that needs widgets later (an explorer) must
  serve their scripts from the site itself (``html_static_path``), never from a CDN.
- Math is shown as its TeX source (the ``texsource`` renderer below) instead of MathJax, which Sphinx would load
  from a CDN.
"""
project = "fedlib-notebooks: results"
copyright = "the fedlib-notebooks authors, MIT licence"  # noqa: A001  (the name Sphinx reads)
extensions = ["myst_nb"]
nb_execution_mode = "off"          # executed notebooks are rendered as they are: the site never trains
nb_output_stderr = "remove"        # progress bars and warnings, not results
nb_ipywidgets_js = {}              # no widget scripts from a CDN (widget outputs are stripped by the builder)
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3           # the READMEs' section links (#results-at-a-glance) resolve
html_theme = "alabaster"
html_theme_options = {"page_width": "98%", "body_max_width": "none", "sidebar_width": "190px"}
html_math_renderer = "texsource"   # no MathJax from a CDN
exclude_patterns = ["_build"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
nb_render_markdown_format = "myst"  # markdown outputs (story.table, the Setup and Verdict tables) with tables
html_copy_source = False           # no _sources/ copies (they hold papermill's metadata)
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["fedlib.css"]    # compact verdict tables; wide tables scroll inside their box


def _inline_math(self, node):
    from docutils import nodes
    self.body.append(self.starttag(node, "code", "", CLASS="math notranslate") + self.encode(node.astext())
                     + "</code>")
    raise nodes.SkipNode


def _block_math(self, node):
    from docutils import nodes
    self.body.append(self.starttag(node, "pre", "", CLASS="math notranslate") + self.encode(node.astext())
                     + "</pre>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("texsource", (_inline_math, None), (_block_math, None))
