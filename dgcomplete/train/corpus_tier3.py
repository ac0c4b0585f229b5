"""Tier 3 of the corpus: the pinned sources that ``python -m dgcomplete.train.corpus --tier 3`` adds to
tiers 1-2 (the large corpus, ``corpus_manifest_large.json``).

Every source is permissively licensed; the builder verifies each licence again from the package's own
metadata (PKG-INFO / METADATA, package.json, the DEP-5 ``debian/copyright``) and refuses evaluation-only
packages by name (``corpus.REFUSED_PACKAGES``).  PyPI wheels carry the same ``.py`` sources as the sdists
(and need no build to read their metadata); Debian packages are from bookworm (a stable release: the exact
``.deb`` / ``.dsc`` and sha256 are recorded in the manifest).  Go and Rust come from the ``golang-*-dev`` and
``librust-*-dev`` binary packages (their sources under ``/usr/share/gocode`` and ``/usr/share/cargo``), C and
Java from source packages (upstream tarballs only, like tier 2, through the private deb-src index of ``corpus.apt_source_options``).
"""

from __future__ import annotations

# (name, version, licence from the package metadata, fetch: wheel | sdist)
PYPI: list[tuple[str, str, str, str]] = [
    ("nova", "34.0.0", "Apache-2.0", "wheel"),
    ("neutron", "29.0.0", "Apache-2.0", "wheel"),
    ("cinder", "29.0.0", "Apache-2.0", "wheel"),
    ("keystone", "30.0.0", "Apache-2.0", "wheel"),
    ("glance", "33.0.0", "Apache-2.0", "wheel"),
    ("horizon", "27.0.0", "Apache-2.0", "wheel"),
    ("swift", "2.38.3", "Apache-2.0", "wheel"),
    ("ironic", "39.0.0", "Apache-2.0", "wheel"),
    ("manila", "23.0.1", "Apache-2.0", "wheel"),
    ("octavia", "19.0.0", "Apache-2.0", "wheel"),
    ("designate", "23.0.0", "Apache-2.0", "wheel"),
    ("magnum", "23.0.0", "Apache-2.0", "wheel"),
    ("trove", "26.0.0", "Apache-2.0", "wheel"),
    ("barbican", "23.0.0", "Apache-2.0", "wheel"),
    ("aodh", "23.0.0", "Apache-2.0", "wheel"),
    ("ceilometer", "27.0.0", "Apache-2.0", "wheel"),
    ("zaqar", "23.0.1", "Apache-2.0", "wheel"),
    ("mistral", "23.0.0", "Apache-2.0", "wheel"),
    ("senlin", "16.0.0", "Apache-2.0", "wheel"),
    ("masakari", "22.0.0", "Apache-2.0", "wheel"),
    ("blazar", "18.0.0", "Apache-2.0", "wheel"),
    ("tacker", "16.0.0", "Apache-2.0", "wheel"),
    ("zun", "18.0.0", "Apache-2.0", "wheel"),
    ("tempest", "47.0.0", "Apache-2.0", "wheel"),
    ("python-novaclient", "18.13.1", "Apache-2.0", "wheel"),
    ("python-openstackclient", "10.5.0", "Apache-2.0", "wheel"),
    ("openstacksdk", "4.22.0", "Apache-2.0", "wheel"),
    ("oslo.config", "10.7.0", "Apache-2.0", "wheel"),
    ("oslo.messaging", "18.3.1", "Apache-2.0", "wheel"),
    ("oslo.db", "18.1.1", "Apache-2.0", "wheel"),
    ("oslo.utils", "10.2.0", "Apache-2.0", "wheel"),
    ("oslo.log", "8.3.2", "Apache-2.0", "wheel"),
    ("oslo.concurrency", "7.6.1", "Apache-2.0", "wheel"),
    ("oslo.service", "4.8.0", "Apache-2.0", "wheel"),
    ("oslo.policy", "6.0.1", "Apache-2.0", "wheel"),
    ("oslo.versionedobjects", "3.12.0", "Apache-2.0", "wheel"),
    ("keystoneauth1", "5.18.1", "Apache-2.0", "wheel"),
    ("keystonemiddleware", "13.0.1", "Apache-2.0", "wheel"),
    ("taskflow", "6.5.0", "Apache-2.0", "wheel"),
    ("os-brick", "7.1.1", "Apache-2.0", "wheel"),
    ("os-vif", "5.3.0", "Apache-2.0", "wheel"),
    ("ovsdbapp", "3.0.0", "Apache-2.0", "wheel"),
    ("neutron-lib", "5.0.1", "Apache-2.0", "wheel"),
    ("openstack-placement", "16.0.0", "Apache-2.0", "wheel"),
    ("ironic-python-agent", "13.0.0", "Apache-2.0", "wheel"),
    ("osprofiler", "4.4.0", "Apache-2.0", "wheel"),
    ("stevedore", "5.10.0", "Apache-2.0", "wheel"),
    ("cliff", "4.17.0", "Apache-2.0", "wheel"),
    ("python-cinderclient", "9.10.0", "Apache-2.0", "wheel"),
    ("python-neutronclient", "14.0.0", "Apache-2.0", "wheel"),
    ("python-heatclient", "5.3.0", "Apache-2.0", "wheel"),
    ("python-ironicclient", "6.3.0", "Apache-2.0", "wheel"),
    ("python-keystoneclient", "6.0.0", "Apache-2.0", "wheel"),
    ("python-glanceclient", "4.13.0", "Apache-2.0", "wheel"),
    ("python-swiftclient", "4.11.0", "Apache-2.0", "wheel"),
    ("homeassistant", "2024.3.3", "Apache-2.0", "wheel"),
    ("salt", "3008.5", "Apache-2.0", "sdist"),
    ("apache-airflow-providers-amazon", "9.39.0", "Apache-2.0", "wheel"),
    ("apache-airflow-providers-google", "22.8.0", "Apache-2.0", "wheel"),
    ("apache-beam", "2.77.0", "Apache-2.0", "wheel"),
    ("ray", "2.60.0", "Apache-2.0", "wheel"),
    ("mlflow", "3.18.0", "Apache-2.0", "wheel"),
    ("dagster", "1.13.29", "Apache-2.0", "wheel"),
    ("prefect", "3.9.1", "Apache-2.0", "wheel"),
    ("great-expectations", "1.24.1", "Apache-2.0", "wheel"),
    ("luigi", "3.8.1", "Apache-2.0", "wheel"),
    ("matplotlib", "3.11.2", "PSF", "wheel"),
    ("bokeh", "3.9.2", "BSD", "wheel"),
    ("panel", "1.9.4", "BSD", "wheel"),
    ("holoviews", "1.23.2", "BSD", "wheel"),
    ("param", "2.4.2", "BSD", "wheel"),
    ("datashader", "0.19.1", "BSD", "wheel"),
    ("langchain", "1.5.2", "MIT", "wheel"),
    ("langchain-core", "1.8.4", "MIT", "wheel"),
    ("langchain-community", "0.4.2", "MIT", "wheel"),
    ("llama-index-core", "0.14.25", "MIT", "wheel"),
    ("diffusers", "0.42.1", "Apache-2.0", "wheel"),
    ("accelerate", "1.15.0", "Apache-2.0", "wheel"),
    ("peft", "0.21.2", "Apache-2.0", "wheel"),
    ("datasets", "5.2.0", "Apache-2.0", "wheel"),
    ("huggingface-hub", "2.4.0", "Apache-2.0", "wheel"),
    ("evaluate", "0.4.6", "Apache-2.0", "wheel"),
    ("optimum", "2.3.0", "Apache-2.0", "wheel"),
    ("trl", "1.16.0", "Apache-2.0", "wheel"),
    ("timm", "1.0.31", "Apache-2.0", "wheel"),
    ("jax", "0.10.2", "Apache-2.0", "wheel"),
    ("flax", "0.12.8", "Apache-2.0", "wheel"),
    ("optax", "0.2.8", "Apache-2.0", "wheel"),
    ("chex", "0.1.92", "Apache-2.0", "wheel"),
    ("orbax-checkpoint", "0.12.8", "Apache-2.0", "wheel"),
    ("dm-haiku", "0.0.17", "Apache-2.0", "wheel"),
    ("tensorflow-probability", "0.25.0", "Apache-2.0", "wheel"),
    ("tensorflow-datasets", "4.9.10", "Apache-2.0", "wheel"),
    ("dm-control", "1.0.50", "Apache-2.0", "wheel"),
    ("gymnasium", "1.4.0", "MIT", "wheel"),
    ("stable-baselines3", "2.9.2", "MIT", "wheel"),
    ("pettingzoo", "1.27.0", "MIT", "wheel"),
    ("scikit-image", "0.26.0", "BSD", "wheel"),
    ("imageio", "2.38.2", "BSD", "wheel"),
    ("tifffile", "2026.3.3", "BSD", "wheel"),
    ("optuna", "5.0.0", "MIT", "wheel"),
    ("shap", "0.51.0", "MIT", "wheel"),
    ("numba", "0.68.1", "BSD", "wheel"),
    ("llvmlite", "0.50.0", "Apache-2.0 / BSD", "wheel"),
    ("pythran", "0.19.0", "BSD", "wheel"),
    ("cython", "3.3.1", "Apache-2.0", "wheel"),
    ("pymc", "5.28.5", "Apache-2.0", "wheel"),
    ("pytensor", "3.0.7", "BSD", "wheel"),
    ("arviz", "0.23.4", "Apache-2.0", "wheel"),
    ("lifelines", "0.30.3", "MIT", "wheel"),
    ("sktime", "1.2.0", "BSD", "wheel"),
    ("darts", "0.48.1", "Apache-2.0", "wheel"),
    ("pyarrow", "26.0.1", "Apache-2.0", "wheel"),
    ("ibis-framework", "12.0.0", "Apache-2.0", "wheel"),
    ("sqlglot", "30.31.0", "MIT", "wheel"),
    ("mpmath", "1.4.1", "BSD", "wheel"),
    ("sunpy", "7.0.5", "BSD", "wheel"),
    ("astroquery", "0.4.11", "BSD", "wheel"),
    ("photutils", "3.0.0", "BSD", "wheel"),
    ("pymatgen", "2026.10.24", "MIT", "wheel"),
    ("qiskit", "2.6.2", "Apache-2.0", "wheel"),
    ("cirq-core", "1.7.0", "Apache-2.0", "wheel"),
    ("pennylane", "0.45.1", "Apache-2.0", "wheel"),
    ("pyomo", "6.10.1", "BSD", "wheel"),
    ("cvxpy", "1.9.3", "Apache-2.0", "wheel"),
    ("pulp", "3.3.2", "MIT", "wheel"),
    ("tortoise-orm", "1.1.9", "Apache-2.0", "wheel"),
    ("pony", "0.7.20", "Apache-2.0", "wheel"),
    ("djangorestframework", "3.18.3", "BSD", "wheel"),
    ("wagtail", "8.0.1", "BSD", "wheel"),
    ("django-cms", "5.1.3", "BSD", "wheel"),
    ("django-oscar", "4.2.1", "BSD", "wheel"),
    ("django-allauth", "65.22.1", "MIT", "wheel"),
    ("django-extensions", "4.1", "MIT", "wheel"),
    ("django-filter", "26.2", "BSD", "wheel"),
    ("django-debug-toolbar", "8.0.0", "BSD", "wheel"),
    ("litestar", "2.25.0", "MIT", "wheel"),
    ("sanic", "25.12.1", "MIT", "wheel"),
    ("falcon", "4.4.0", "Apache-2.0", "wheel"),
    ("quart", "0.22.0", "MIT", "wheel"),
    ("pyramid", "2.1", "BSD", "wheel"),
    ("boto3", "1.44.8", "Apache-2.0", "wheel"),
    ("botocore", "1.44.8", "Apache-2.0", "wheel"),
    ("moto", "5.2.5", "Apache-2.0", "wheel"),
    ("localstack-core", "2026.3.0", "Apache-2.0", "wheel"),
    ("awscli", "1.46.3", "Apache-2.0", "wheel"),
    ("s3transfer", "0.19.3", "Apache-2.0", "wheel"),
    ("docker", "7.2.0", "Apache-2.0", "wheel"),
    ("google-cloud-storage", "3.17.1", "Apache-2.0", "wheel"),
    ("google-cloud-bigquery", "3.47.0", "Apache-2.0", "wheel"),
    ("google-api-core", "2.44.0", "Apache-2.0", "wheel"),
    ("google-auth", "2.63.0", "Apache-2.0", "wheel"),
    ("fabric", "3.2.3", "BSD", "wheel"),
    ("invoke", "3.0.3", "BSD", "wheel"),
    ("nox", "2026.10.20", "Apache-2.0", "wheel"),
    ("coverage", "7.17.5", "Apache-2.0", "wheel"),
    ("flake8", "7.5.0", "MIT", "wheel"),
    ("pycodestyle", "2.15.0", "MIT", "wheel"),
    ("pyflakes", "4.1.0", "MIT", "wheel"),
    ("autopep8", "2.3.2", "MIT", "wheel"),
    ("yapf", "0.43.0", "Apache-2.0", "wheel"),
    ("isort", "9.0.2", "MIT", "wheel"),
    ("libcst", "1.9.0", "MIT", "wheel"),
    ("bandit", "1.9.4", "Apache-2.0", "wheel"),
    ("vulture", "2.16", "MIT", "wheel"),
    ("radon", "6.0.1", "MIT", "wheel"),
    ("mkdocs", "1.6.1", "BSD", "wheel"),
    ("nbconvert", "7.17.2", "BSD", "wheel"),
    ("nbformat", "5.11.1", "BSD", "wheel"),
    ("jupyter-server", "2.21.1", "BSD", "wheel"),
    ("ipykernel", "7.4.0", "BSD", "wheel"),
    ("traitlets", "5.16.1", "BSD", "wheel"),
    ("jupyter-client", "8.10.0", "BSD", "wheel"),
    ("wheel", "0.48.0", "MIT", "wheel"),
    ("build", "1.6.1", "MIT", "wheel"),
    ("hatchling", "1.33.0", "MIT", "wheel"),
    ("flit-core", "4.2.0", "BSD", "wheel"),
    ("pdm", "2.29.4", "MIT", "wheel"),
    ("poetry", "2.5.1", "MIT", "wheel"),
    ("pipx", "1.18.4", "MIT", "wheel"),
    ("meson", "1.12.1", "Apache-2.0", "wheel"),
    ("scons", "4.11.1", "MIT", "wheel"),
    ("babel", "2.19.0", "BSD", "wheel"),
    ("lxml", "6.1.3", "BSD", "wheel"),
    ("beautifulsoup4", "4.15.0", "MIT", "wheel"),
    ("html5lib", "1.1", "MIT", "wheel"),
    ("cryptography", "50.0.2", "Apache-2.0 / BSD", "wheel"),
    ("pyopenssl", "26.4.0", "Apache-2.0", "wheel"),
    ("msgspec", "0.23.0", "BSD", "wheel"),
    ("kivy", "2.3.1", "MIT", "wheel"),
    ("arcade", "3.3.3", "MIT", "wheel"),
    ("trio", "0.35.0", "Apache-2.0 / MIT", "wheel"),
    ("anyio", "4.16.0", "MIT", "wheel"),
    ("gevent", "26.9.0", "MIT", "wheel"),
    ("eventlet", "0.41.3", "MIT", "wheel"),
    ("uvicorn", "0.54.0", "BSD", "wheel"),
    ("gunicorn", "27.0.1", "MIT", "wheel"),
    ("hypercorn", "0.18.0", "MIT", "wheel"),
    ("websockets", "17.4", "BSD", "wheel"),
    ("spacy", "3.8.18", "MIT", "wheel"),
    ("thinc", "9.1.1", "MIT", "wheel"),
    ("textblob", "0.20.1", "MIT", "wheel"),
    ("stanza", "1.15.0", "Apache-2.0", "wheel"),
    ("sqlfluff", "4.5.0", "MIT", "wheel"),
    ("lark", "1.3.1", "MIT", "wheel"),
    ("ply", "3.11", "BSD", "wheel"),
    ("simpy", "4.1.2", "MIT", "wheel"),
    ("zarr", "3.1.6", "MIT", "wheel"),
    ("h5py", "3.16.0", "BSD", "wheel"),
    ("netcdf4", "1.7.5.1.post1", "MIT", "wheel"),
    ("geopandas", "1.2.0", "BSD", "wheel"),
    ("shapely", "2.2.0", "BSD", "wheel"),
    ("pyproj", "3.7.2", "MIT", "wheel"),
    ("fiona", "1.10.1", "BSD", "wheel"),
    ("rasterio", "1.4.4", "BSD", "wheel"),
    ("cartopy", "0.26.0", "BSD", "wheel"),
    ("folium", "0.20.0", "MIT", "wheel"),
    ("osmnx", "2.1.1", "MIT", "wheel"),
    ("rq", "3.0.0", "BSD", "wheel"),
    ("redis", "8.1.0", "MIT", "wheel"),
    ("pymongo", "4.20.1", "Apache-2.0", "wheel"),
    ("elasticsearch", "9.5.1", "Apache-2.0", "wheel"),
    ("cassandra-driver", "3.30.1", "Apache-2.0", "wheel"),
    ("neo4j", "6.4.1", "Apache-2.0", "wheel"),
    ("sentry-sdk", "2.75.0", "MIT", "wheel"),
    ("structlog", "26.1.0", "Apache-2.0 / MIT", "wheel"),
    ("loguru", "0.7.3", "MIT", "wheel"),
    ("pendulum", "3.3.0", "MIT", "wheel"),
    ("certbot", "5.8.0", "Apache-2.0", "wheel"),
    ("acme", "5.9.0", "Apache-2.0", "wheel"),
    ("mitmproxy", "11.0.2", "MIT", "wheel"),
    ("angr", "9.2.213", "BSD", "wheel"),
    ("claripy", "9.2.213", "BSD", "wheel"),
    ("cle", "9.2.213", "BSD", "wheel"),
    ("archinfo", "9.2.213", "BSD", "wheel"),
    ("trimesh", "5.2.0", "MIT", "wheel"),
    ("pyvista", "0.49.2", "MIT", "wheel"),
    ("napari", "0.9.2", "BSD", "wheel"),
    ("vispy", "0.17.0", "BSD", "wheel"),
    ("pyqtgraph", "0.14.0", "MIT", "wheel"),
    ("magicgui", "0.10.2", "MIT", "wheel"),
    ("qtpy", "2.4.3", "MIT", "wheel"),
    ("markdown", "3.11.3", "BSD", "wheel"),
    ("mistune", "3.4.0", "BSD", "wheel"),
    ("markdown-it-py", "4.3.0", "MIT", "wheel"),
    ("ruamel.yaml", "0.19.1", "MIT", "wheel"),
    ("tomli", "2.5.0", "MIT", "wheel"),
    ("msgpack", "1.2.4", "Apache-2.0", "wheel"),
    ("simplejson", "4.3.0", "MIT", "wheel"),
    ("wandb", "0.31.0", "MIT", "wheel"),
    ("tensorboard", "2.21.0", "Apache-2.0", "wheel"),
    ("gym", "0.26.2", "MIT", "sdist"),
]

# (name, version, licence from package.json)
NPM: list[tuple[str, str, str]] = [
    ("@babylonjs/core", "9.35.0", "Apache-2.0"),
    ("@babylonjs/gui", "9.35.0", "Apache-2.0"),
    ("@babylonjs/loaders", "9.28.0", "Apache-2.0"),
    ("@babylonjs/materials", "9.35.0", "Apache-2.0"),
    ("playcanvas", "2.23.3", "MIT"),
    ("phaser", "4.2.1", "MIT"),
    ("pixi.js", "8.22.0", "MIT"),
    ("ol", "10.11.0", "BSD"),
    ("@cesium/engine", "24.0.0", "Apache-2.0"),
    ("@cesium/widgets", "14.5.0", "Apache-2.0"),
    ("leaflet", "1.9.4", "BSD"),
    ("echarts", "6.1.0", "Apache-2.0"),
    ("zrender", "6.1.0", "BSD"),
    ("plotly.js", "3.7.0", "MIT"),
    ("vega-lite", "6.4.3", "BSD"),
    ("@observablehq/plot", "0.6.17", "ISC"),
    ("monaco-editor", "0.57.0", "MIT"),
    ("@codemirror/view", "6.43.15", "MIT"),
    ("@codemirror/state", "6.7.6", "MIT"),
    ("@codemirror/language", "6.13.1", "MIT"),
    ("@codemirror/autocomplete", "6.20.4", "MIT"),
    ("@codemirror/commands", "6.11.1", "MIT"),
    ("@lezer/common", "1.5.5", "MIT"),
    ("@lezer/lr", "1.4.12", "MIT"),
    ("mathjax-full", "3.2.2", "Apache-2.0"),
    ("@tensorflow/tfjs-core", "4.22.0", "Apache-2.0"),
    ("@tensorflow/tfjs-layers", "4.22.0", "Apache-2.0 / MIT"),
    ("@tensorflow/tfjs-converter", "4.22.0", "Apache-2.0"),
    ("@tensorflow/tfjs-backend-cpu", "4.22.0", "Apache-2.0"),
    ("@tensorflow/tfjs-backend-webgl", "4.22.0", "Apache-2.0"),
    ("@jupyterlab/application", "4.6.6", "BSD"),
    ("@jupyterlab/apputils", "4.7.6", "BSD"),
    ("@jupyterlab/notebook", "4.6.6", "BSD"),
    ("@jupyterlab/cells", "4.6.6", "BSD"),
    ("@jupyterlab/codemirror", "4.6.6", "BSD"),
    ("@jupyterlab/completer", "4.6.6", "BSD"),
    ("@jupyterlab/console", "4.6.4", "BSD"),
    ("@jupyterlab/docregistry", "4.6.6", "BSD"),
    ("@jupyterlab/filebrowser", "4.6.6", "BSD"),
    ("@jupyterlab/fileeditor", "4.6.4", "BSD"),
    ("@jupyterlab/rendermime", "4.6.6", "BSD"),
    ("@jupyterlab/services", "7.6.6", "BSD"),
    ("@jupyterlab/ui-components", "4.6.6", "BSD"),
    ("@jupyterlab/settingregistry", "4.6.6", "BSD"),
    ("@jupyterlab/coreutils", "6.6.6", "BSD"),
    ("@jupyterlab/translation", "4.6.6", "BSD"),
    ("@jupyterlab/debugger", "4.6.4", "BSD"),
    ("@jupyterlab/outputarea", "4.6.6", "BSD"),
    ("@jupyterlab/observables", "5.6.6", "BSD"),
    ("@jupyterlab/docmanager", "4.6.6", "BSD"),
    ("@jupyterlab/documentsearch", "4.6.6", "BSD"),
    ("@jupyterlab/lsp", "4.6.6", "BSD"),
    ("@jupyterlab/terminal", "4.6.6", "BSD"),
    ("@jupyterlab/toc", "6.6.6", "BSD"),
    ("@jupyterlab/statusbar", "4.6.6", "BSD"),
    ("@jupyterlab/launcher", "4.6.6", "BSD"),
    ("@jupyterlab/mainmenu", "4.6.4", "BSD"),
    ("@jupyterlab/extensionmanager", "4.6.4", "BSD"),
    ("@lumino/widgets", "2.11.0", "BSD"),
    ("@lumino/commands", "2.3.4", "BSD"),
    ("@lumino/datagrid", "2.6.0", "BSD"),
    ("@lumino/algorithm", "2.0.5", "BSD"),
    ("@lumino/coreutils", "2.2.3", "BSD"),
    ("@lumino/signaling", "2.1.6", "BSD"),
    ("@lumino/messaging", "2.0.5", "BSD"),
    ("@lumino/virtualdom", "2.0.5", "BSD"),
    ("@lumino/dragdrop", "2.1.9", "BSD"),
    ("@effect/schema", "0.75.5", "MIT"),
    ("@effect/platform", "0.97.2", "MIT"),
    ("@effect/platform-node", "4.0.6", "MIT"),
    ("@effect/sql", "0.52.1", "MIT"),
    ("@effect/cli", "0.77.2", "MIT"),
    ("@effect/rpc", "0.76.2", "MIT"),
    ("@effect/experimental", "0.61.1", "MIT"),
    ("@effect/opentelemetry", "4.0.1", "MIT"),
    ("@effect/printer", "0.51.0", "MIT"),
    ("@effect/typeclass", "0.41.0", "MIT"),
    ("@effect/cluster", "0.60.2", "MIT"),
    ("@trpc/server", "11.25.2", "MIT"),
    ("@trpc/client", "11.25.2", "MIT"),
    ("@grpc/grpc-js", "1.14.7", "Apache-2.0"),
    ("@grpc/proto-loader", "0.8.1", "Apache-2.0"),
    ("protobufjs", "8.8.1", "BSD"),
    ("@opentelemetry/api", "1.10.0", "Apache-2.0"),
    ("@opentelemetry/core", "2.12.1", "Apache-2.0"),
    ("@opentelemetry/sdk-trace-base", "2.12.1", "Apache-2.0"),
    ("@opentelemetry/sdk-metrics", "2.12.1", "Apache-2.0"),
    ("@opentelemetry/instrumentation", "0.223.0", "Apache-2.0"),
    ("@opentelemetry/semantic-conventions", "1.45.0", "Apache-2.0"),
    ("@opentelemetry/resources", "2.12.1", "Apache-2.0"),
    ("@opentelemetry/sdk-logs", "0.223.1", "Apache-2.0"),
    ("@opentelemetry/otlp-transformer", "0.223.1", "Apache-2.0"),
    ("@sentry/core", "11.12.0", "MIT"),
    ("@sentry/browser", "11.12.0", "MIT"),
    ("@sentry/node", "11.12.0", "MIT"),
    ("@sentry/utils", "8.55.2", "MIT"),
    ("@sentry/react", "11.12.0", "MIT"),
    ("@types/node", "26.6.11", "MIT"),
    ("@types/react", "19.3.3", "MIT"),
    ("@types/lodash", "4.17.27", "MIT"),
    ("@types/three", "0.187.0", "MIT"),
    ("@types/express-serve-static-core", "5.1.3", "MIT"),
    ("@types/chrome", "0.3.7", "MIT"),
    ("@types/jest", "30.0.0", "MIT"),
    ("@types/mocha", "10.0.10", "MIT"),
    ("@types/sinon", "22.0.2", "MIT"),
    ("@types/bluebird", "3.5.42", "MIT"),
    ("@types/angular", "1.8.9", "MIT"),
    ("@types/ws", "8.18.2", "MIT"),
    ("@types/google-apps-script", "2.0.13", "MIT"),
    ("@types/webxr", "0.5.24", "MIT"),
    ("@types/leaflet", "1.9.23", "MIT"),
    ("@types/openui5", "1.151.0", "MIT"),
    ("@types/react-native", "0.72.8", "MIT"),
    ("@types/babel__traverse", "7.28.0", "MIT"),
    ("@types/estree", "1.0.11", "MIT"),
    ("@types/eslint", "9.6.1", "MIT"),
    ("@types/yargs", "17.0.35", "MIT"),
    ("@types/inquirer", "9.0.10", "MIT"),
    ("@types/lodash-es", "4.17.12", "MIT"),
    ("@types/k6", "2.3.0", "MIT"),
    ("@types/ckeditor__ckeditor5-engine", "32.0.11", "MIT"),
    ("@vue/compiler-core", "3.5.45", "MIT"),
    ("@vue/reactivity", "3.5.45", "MIT"),
    ("@vue/compiler-dom", "3.5.45", "MIT"),
    ("@vue/runtime-dom", "3.5.45", "MIT"),
    ("@vue/server-renderer", "3.5.45", "MIT"),
    ("solid-js", "1.9.20", "MIT"),
    ("xstate", "5.33.3", "MIT"),
    ("@xstate/react", "6.1.0", "MIT"),
    ("kysely", "0.28.19", "MIT"),
    ("drizzle-orm", "0.45.4", "Apache-2.0"),
    ("@mikro-orm/core", "6.6.16", "MIT"),
    ("class-validator", "0.15.1", "MIT"),
    ("class-transformer", "0.5.1", "MIT"),
    ("@sinclair/typebox", "0.34.52", "MIT"),
    ("type-fest", "5.10.0", "MIT / Public-domain-like"),
    ("io-ts", "2.2.22", "MIT"),
    ("@typescript-eslint/typescript-estree", "8.74.0", "MIT"),
    ("@typescript-eslint/eslint-plugin", "8.74.0", "MIT"),
    ("@typescript-eslint/utils", "8.74.0", "MIT"),
    ("@typescript-eslint/scope-manager", "8.74.0", "MIT"),
    ("@angular/forms", "21.2.26", "MIT"),
    ("@angular/router", "21.2.26", "MIT"),
    ("@angular/material", "22.2.6", "MIT"),
    ("@angular/cdk", "22.2.7", "MIT"),
    ("@angular/animations", "21.2.24", "MIT"),
    ("@angular/platform-browser", "21.2.26", "MIT"),
    ("@ngrx/store", "22.0.1", "MIT"),
    ("@ngrx/effects", "22.0.1", "MIT"),
    ("@nestjs/microservices", "12.1.1", "MIT"),
    ("@nestjs/platform-express", "12.5.1", "MIT"),
    ("@nestjs/graphql", "14.0.3", "MIT"),
    ("@nestjs/typeorm", "12.0.2", "MIT"),
    ("@nestjs/swagger", "12.0.2", "MIT"),
    ("@apollo/client", "4.3.8", "MIT"),
    ("@apollo/server", "5.5.1", "MIT"),
    ("@graphql-tools/schema", "10.1.5", "MIT"),
    ("@graphql-tools/utils", "12.1.0", "MIT"),
    ("relay-runtime", "21.0.1", "MIT"),
    ("@mui/material", "9.5.0", "MIT"),
    ("@mui/system", "9.5.0", "MIT"),
    ("@mui/x-data-grid", "9.17.0", "MIT"),
    ("@fluentui/react", "8.125.7", "MIT"),
    ("@blueprintjs/core", "6.20.0", "Apache-2.0"),
    ("@chakra-ui/react", "3.38.0", "MIT"),
    ("@mantine/core", "9.8.1", "MIT"),
    ("@babel/preset-env", "7.29.14", "MIT"),
    ("@babel/generator", "7.29.16", "MIT"),
    ("@babel/helpers", "7.29.16", "MIT"),
    ("@babel/runtime-corejs3", "8.1.0", "MIT"),
    ("core-js", "3.51.0", "MIT"),
    ("terser", "5.51.4", "BSD"),
    ("uglify-js", "3.19.3", "BSD"),
    ("less", "4.9.1", "Apache-2.0"),
    ("stylus", "0.64.0", "MIT"),
    ("highlight.js", "11.12.0", "BSD"),
    ("prismjs", "1.30.0", "MIT"),
    ("katex", "0.19.1", "MIT"),
    ("jsdom", "29.1.1", "MIT"),
    ("cheerio", "1.2.0", "MIT"),
    ("parse5", "8.1.1", "MIT"),
    ("htmlparser2", "12.0.0", "MIT"),
    ("undici", "7.30.2", "MIT"),
    ("node-fetch", "3.3.2", "MIT"),
    ("got", "14.6.6", "MIT"),
    ("ky", "1.14.3", "MIT"),
    ("superagent", "10.4.2", "MIT"),
    ("puppeteer-core", "24.43.1", "Apache-2.0"),
    ("playwright-core", "1.65.1", "Apache-2.0"),
    ("selenium-webdriver", "4.46.0", "Apache-2.0"),
    ("webdriverio", "9.33.1", "MIT"),
    ("mocha", "12.0.3", "MIT"),
    ("chai", "6.3.0", "MIT"),
    ("sinon", "22.1.0", "BSD"),
    ("jest-circus", "30.5.2", "MIT"),
    ("expect", "30.5.2", "MIT"),
    ("lodash-es", "4.18.1", "MIT"),
    ("dayjs", "1.11.23", "MIT"),
    ("mobx-state-tree", "9.0.0", "MIT"),
    ("jotai", "2.20.3", "MIT"),
    ("zustand", "5.1.0", "MIT"),
    ("valtio", "2.3.2", "MIT"),
    ("@stdlib/math", "0.4.1", "Apache-2.0"),
    ("@stdlib/stats", "0.4.1", "Apache-2.0"),
    ("@stdlib/string", "0.4.1", "Apache-2.0"),
    ("@stdlib/utils", "0.4.1", "Apache-2.0"),
    ("@stdlib/array", "0.5.1", "Apache-2.0"),
    ("@stdlib/assert", "0.4.1", "Apache-2.0"),
    ("@stdlib/ndarray", "0.4.1", "Apache-2.0"),
    ("@stdlib/random", "0.4.1", "Apache-2.0"),
    ("@stdlib/strided", "0.4.1", "Apache-2.0"),
    ("@stdlib/blas", "0.4.1", "Apache-2.0"),
    ("firebase", "13.2.0", "Apache-2.0"),
    ("@firebase/firestore", "4.17.2", "Apache-2.0"),
    ("@firebase/auth", "1.13.6", "Apache-2.0"),
    ("@firebase/database", "1.1.5", "Apache-2.0"),
    ("vscode-languageserver", "11.0.0", "MIT"),
    ("vscode-languageserver-protocol", "3.18.5", "MIT"),
    ("vscode-jsonrpc", "10.0.0", "MIT"),
    ("vscode-languageclient", "11.0.0", "MIT"),
    ("node-red", "4.1.15", "Apache-2.0"),
    ("@node-red/runtime", "5.0.7", "Apache-2.0"),
    ("@node-red/editor-client", "5.0.7", "Apache-2.0"),
    ("openai", "6.49.0", "Apache-2.0"),
    ("@anthropic-ai/sdk", "1.15.0", "Apache-2.0"),
    ("langchain", "1.5.14", "MIT"),
    ("@langchain/core", "1.4.0", "MIT"),
    ("pdf-lib", "1.17.1", "MIT"),
    ("yjs", "13.6.33", "MIT"),
    ("lib0", "0.2.120", "MIT"),
    ("automerge", "0.14.2", "MIT"),
    ("fabric", "7.4.0", "MIT"),
    ("konva", "10.9.1", "MIT"),
    ("paper", "0.12.20", "MIT"),
    ("matter-js", "0.20.0", "MIT"),
    ("cannon-es", "0.20.0", "MIT"),
    ("@deck.gl/core", "9.4.0", "MIT"),
    ("@deck.gl/layers", "9.4.0", "MIT"),
    ("@deck.gl/geo-layers", "9.4.0", "MIT"),
    ("@deck.gl/aggregation-layers", "9.4.0", "MIT"),
    ("@deck.gl/mesh-layers", "9.4.0", "MIT"),
    ("@deck.gl/extensions", "9.4.0", "MIT"),
    ("@deck.gl/react", "9.4.0", "MIT"),
    ("@deck.gl/widgets", "9.4.0", "MIT"),
    ("@deck.gl/google-maps", "9.4.0", "MIT"),
    ("@deck.gl/mapbox", "9.4.0", "MIT"),
    ("@luma.gl/core", "9.4.2", "MIT"),
    ("@luma.gl/engine", "9.4.2", "MIT"),
    ("@luma.gl/webgl", "9.4.2", "MIT"),
    ("@luma.gl/webgpu", "9.4.2", "MIT"),
    ("@luma.gl/shadertools", "9.4.2", "MIT"),
    ("@luma.gl/gltf", "9.4.2", "MIT"),
    ("@luma.gl/constants", "9.4.2", "MIT"),
    ("@loaders.gl/core", "4.5.4", "MIT"),
    ("@loaders.gl/loader-utils", "4.5.4", "MIT"),
    ("@loaders.gl/gltf", "4.5.4", "MIT"),
    ("@loaders.gl/images", "4.5.4", "MIT"),
    ("@loaders.gl/tiles", "4.5.4", "MIT"),
    ("@loaders.gl/3d-tiles", "4.5.4", "MIT"),
    ("@loaders.gl/las", "4.5.1", "MIT"),
    ("@loaders.gl/mvt", "4.5.2", "MIT"),
    ("@loaders.gl/csv", "4.5.2", "MIT"),
    ("@loaders.gl/json", "4.5.2", "MIT"),
    ("@loaders.gl/parquet", "4.5.2", "MIT"),
    ("@loaders.gl/arrow", "4.5.2", "MIT"),
    ("@loaders.gl/draco", "4.5.4", "MIT"),
    ("@loaders.gl/schema", "4.5.4", "MIT"),
    ("@loaders.gl/gis", "4.5.2", "MIT"),
    ("@loaders.gl/i3s", "4.4.4", "MIT"),
    ("@loaders.gl/terrain", "4.5.4", "MIT"),
    ("@loaders.gl/textures", "4.5.4", "MIT"),
    ("@loaders.gl/worker-utils", "4.5.4", "MIT"),
    ("@loaders.gl/polyfills", "4.5.2", "MIT"),
    ("@loaders.gl/math", "4.5.4", "MIT"),
    ("@loaders.gl/wkt", "4.5.2", "MIT"),
    ("@loaders.gl/kml", "4.5.2", "MIT"),
    ("@loaders.gl/shapefile", "4.5.2", "MIT"),
    ("@loaders.gl/xml", "4.5.4", "MIT"),
    ("@loaders.gl/pcd", "4.4.2", "MIT"),
    ("@loaders.gl/ply", "4.4.5", "MIT"),
    ("@loaders.gl/obj", "4.5.2", "MIT"),
    ("@loaders.gl/zip", "4.5.4", "MIT"),
    ("@loaders.gl/crypto", "4.5.4", "MIT"),
    ("@loaders.gl/flatgeobuf", "4.5.2", "MIT"),
    ("@loaders.gl/geopackage", "4.4.4", "MIT"),
    ("@loaders.gl/excel", "4.5.2", "MIT"),
    ("@loaders.gl/video", "4.5.2", "MIT"),
    ("@loaders.gl/compression", "4.5.4", "MIT"),
    ("@math.gl/core", "4.1.0", "MIT"),
    ("@math.gl/culling", "4.1.0", "MIT"),
    ("@math.gl/geospatial", "4.1.0", "MIT"),
    ("@math.gl/web-mercator", "4.1.0", "MIT"),
    ("@math.gl/polygon", "4.1.0", "MIT"),
    ("@antv/g2", "5.4.8", "MIT"),
    ("@antv/g6", "5.1.1", "MIT"),
    ("@antv/x6", "3.1.8", "MIT"),
    ("@antv/g", "6.3.1", "MIT"),
    ("@antv/g-lite", "2.7.2", "MIT"),
    ("@antv/s2", "2.7.2", "MIT"),
    ("@antv/f2", "5.14.0", "MIT"),
    ("@antv/l7-core", "2.29.1", "MIT"),
    ("@antv/l7-layers", "2.29.1", "MIT"),
    ("@antv/l7-maps", "2.29.1", "MIT"),
    ("@antv/l7-renderer", "2.29.1", "MIT"),
    ("@antv/l7-scene", "2.29.1", "MIT"),
    ("@antv/l7-source", "2.29.1", "MIT"),
    ("@antv/l7-utils", "2.29.1", "MIT"),
    ("@antv/layout", "2.0.1", "MIT"),
    ("@antv/algorithm", "0.1.26", "MIT"),
    ("@antv/graphlib", "2.0.4", "MIT"),
    ("@antv/util", "3.3.11", "MIT"),
    ("@antv/scale", "0.5.2", "MIT"),
    ("@antv/component", "2.1.12", "MIT"),
    ("@antv/g2plot", "2.4.35", "MIT"),
    ("@antv/x6-plugin-selection", "2.2.2", "MIT"),
    ("@xterm/xterm", "6.0.0", "MIT"),
    ("@xterm/addon-search", "0.16.0", "MIT"),
    ("@xterm/addon-webgl", "0.19.0", "MIT"),
    ("@xterm/addon-serialize", "0.14.0", "MIT"),
    ("@xterm/headless", "6.0.0", "MIT"),
    ("quill", "2.0.3", "BSD"),
    ("aws-cdk-lib", "2.276.0", "Apache-2.0"),
    ("@pulumi/pulumi", "3.248.0", "Apache-2.0"),
    ("react-native", "0.86.3", "MIT"),
    ("react-native-web", "0.21.4", "MIT"),
    ("@react-native/virtualized-lists", "0.86.3", "MIT"),
    ("@microsoft/signalr", "10.0.11", "MIT"),
    ("@azure/msal-common", "16.17.0", "MIT"),
    ("@azure/msal-browser", "5.30.0", "MIT"),
    ("@azure/core-rest-pipeline", "1.24.0", "MIT"),
    ("@azure/identity", "4.13.1", "MIT"),
    ("@azure/storage-blob", "12.32.0", "MIT"),
    ("@azure/cosmos", "4.9.3", "MIT"),
    ("@azure/service-bus", "7.9.5", "MIT"),
    ("@azure/event-hubs", "6.0.4", "MIT"),
    ("@spectrum-web-components/base", "1.12.2", "Apache-2.0"),
    ("@microsoft/fast-element", "3.0.3", "MIT"),
    ("@microsoft/fast-foundation", "2.50.0", "MIT"),
    ("@shoelace-style/shoelace", "2.20.1", "MIT"),
    ("@material/web", "2.5.0", "Apache-2.0"),
    ("@vaadin/grid", "25.3.0", "Apache-2.0"),
    ("@vaadin/component-base", "25.3.0", "Apache-2.0"),
    ("excalibur", "0.32.0", "BSD"),
    ("fastify", "5.12.8", "MIT"),
    ("@hapi/hapi", "21.4.10", "BSD"),
    ("@hapi/joi", "17.1.1", "BSD"),
    ("typedoc", "0.28.20", "Apache-2.0"),
    ("@docusaurus/core", "3.10.2", "MIT"),
    ("ts-toolbelt", "9.6.0", "Apache-2.0"),
    ("@google/genai", "2.32.0", "Apache-2.0"),
    ("ai", "6.0.326", "Apache-2.0"),
    ("arktype", "2.2.10", "MIT"),
    ("@lexical/table", "0.52.0", "MIT"),
    ("lexical", "0.53.0", "MIT"),
    ("@xyflow/system", "0.0.84", "MIT"),
    ("@ionic/core", "9.0.5", "MIT"),
    ("@stencil/core", "4.45.1", "MIT"),
]

# Debian bookworm golang-*-dev binary packages (Go sources): 586
GO_DEBS: list[str] = """
golang-android-soong-dev golang-ariga-atlas-dev golang-barcode-dev golang-bazil-fuse-dev
golang-blitiri-go-spf-dev golang-code.rocketnine-tslocum-cview-dev golang-collectd-dev golang-dbus-dev
golang-ed25519-dev golang-entgo-ent-dev golang-etcd-server-dev golang-filippo-age-dev
golang-filippo-edwards25519-dev golang-github-adrianmo-go-nmea-dev golang-github-advancedlogic-goose-dev
golang-github-akamai-akamaiopen-edgegrid-golang-dev golang-github-alecaivazis-survey-dev
golang-github-alecthomas-chroma-dev golang-github-alecthomas-chroma-v2-dev golang-github-alecthomas-kong-dev
golang-github-alecthomas-participle-dev golang-github-aliyun-aliyun-oss-go-sdk-dev
golang-github-anacrolix-dms-dev golang-github-anacrolix-missinggo-dev golang-github-andreykaipov-goobs-dev
golang-github-andybalholm-brotli-dev golang-github-ant0ine-go-json-rest-dev golang-github-antlr-antlr4-dev
golang-github-antonmedv-expr-dev golang-github-apparentlymart-go-versions-dev golang-github-appc-cni-dev
golang-github-appc-spec-dev golang-github-apptainer-container-library-client-dev
golang-github-aquasecurity-go-dep-parser-dev golang-github-armon-go-metrics-dev
golang-github-asaskevich-govalidator-dev golang-github-awalterschulze-gographviz-dev
golang-github-aws-smithy-go-dev golang-github-axgle-mahonia-dev golang-github-azure-azure-storage-blob-go-dev
golang-github-azure-go-autorest-dev golang-github-bep-goat-dev golang-github-bep-godartsass-dev
golang-github-bep-golibsass-dev golang-github-bep-gowebp-dev golang-github-bettercap-readline-dev
golang-github-bgp-stayrtr-dev golang-github-bifurcation-mint-dev golang-github-biogo-biogo-dev
golang-github-biogo-hts-dev golang-github-biogo-store-dev golang-github-blevesearch-segment-dev
golang-github-bmatsuo-lmdb-go-dev golang-github-boltdb-bolt-dev golang-github-brentp-irelate-dev
golang-github-brentp-vcfgo-dev golang-github-btcsuite-btcd-btcec-dev golang-github-buengese-sgzip-dev
golang-github-bugsnag-bugsnag-go-dev golang-github-burntsushi-toml-dev golang-github-burntsushi-xgb-dev
golang-github-bwesterb-go-ristretto-dev golang-github-c-bata-go-prompt-dev golang-github-c-robinson-iplib-dev
golang-github-caddyserver-certmagic-dev golang-github-canonical-go-dqlite-dev golang-github-casbin-casbin-dev
golang-github-centrifugal-centrifuge-dev golang-github-centrifugal-protocol-dev
golang-github-chai2010-gettext-go-dev golang-github-charmbracelet-bubbles-dev
golang-github-charmbracelet-bubbletea-dev golang-github-charmbracelet-glamour-dev
golang-github-christrenkamp-goxpath-dev golang-github-chromedp-cdproto-dev golang-github-cilium-ebpf-dev
golang-github-circonus-labs-circonus-gometrics-dev golang-github-clbanning-mxj-dev golang-github-cli-go-gh-dev
golang-github-cloudflare-cfssl-dev golang-github-cloudflare-circl-dev golang-github-cloudflare-go-metrics-dev
golang-github-cloudflare-redoctober-dev golang-github-cloudflare-sidh-dev
golang-github-cloudfoundry-gosigar-dev golang-github-cockroachdb-apd-dev golang-github-colinmarc-hdfs-dev
golang-github-confluentinc-confluent-kafka-go-dev
golang-github-container-orchestrated-devices-container-device-interface-dev
golang-github-containerd-cgroups-dev golang-github-containerd-containerd-dev
golang-github-containerd-continuity-dev golang-github-containerd-stargz-snapshotter-dev
golang-github-containernetworking-plugins-dev golang-github-containers-buildah-dev
golang-github-containers-common-dev golang-github-containers-image-dev golang-github-containers-ocicrypt-dev
golang-github-containers-storage-dev golang-github-coredhcp-coredhcp-dev golang-github-coreos-bbolt-dev
golang-github-coreos-go-json-dev golang-github-coreos-go-systemd-dev golang-github-cretz-bine-dev
golang-github-crossdock-crossdock-go-dev golang-github-crowdsecurity-crowdsec-dev
golang-github-ctdk-goiardi-dev golang-github-cupcake-rdb-dev golang-github-cznic-fileutil-dev
golang-github-cznic-lldb-dev golang-github-cznic-mathutil-dev golang-github-cznic-ql-dev
golang-github-data-dog-go-sqlmock-dev golang-github-dataence-porter2-dev golang-github-dave-jennifer-dev
golang-github-davecgh-go-spew-dev golang-github-davecgh-go-xdr-dev golang-github-ddevault-go-libvterm-dev
golang-github-denisenkom-go-mssqldb-dev golang-github-dennwc-btrfs-dev golang-github-denverdino-aliyungo-dev
golang-github-dgraph-io-badger-dev golang-github-digitalocean-go-libvirt-dev
golang-github-digitalocean-go-qemu-dev golang-github-digitalocean-godo-dev
golang-github-disintegration-gift-dev golang-github-disintegration-imaging-dev golang-github-dkolbly-wl-dev
golang-github-dlclark-regexp2-dev golang-github-docker-distribution-dev golang-github-docker-docker-dev
golang-github-docker-go-dev golang-github-docker-libtrust-dev golang-github-docker-notary-dev
golang-github-docker-spdystream-dev golang-github-dop251-goja-dev
golang-github-dropbox-dropbox-sdk-go-unofficial-dev golang-github-dsnet-golib-dev
golang-github-duo-labs-webauthn-dev golang-github-dvsekhvalnov-jose2go-dev golang-github-elazarl-goproxy-dev
golang-github-emersion-go-imap-dev golang-github-emersion-go-message-dev golang-github-emicklei-go-restful-dev
golang-github-emirpasic-gods-dev golang-github-enescakir-emoji-dev golang-github-etcd-io-gofail-dev
golang-github-evanphx-json-patch-dev golang-github-evanw-esbuild-dev golang-github-facebook-ent-dev
golang-github-flosch-pongo2.v4-dev golang-github-flowstack-go-jsonschema-dev golang-github-fluffle-goirc-dev
golang-github-flynn-json5-dev golang-github-flynn-noise-dev golang-github-francoispqt-gojay-dev
golang-github-frankban-quicktest-dev golang-github-fsnotify-fsnotify-dev
golang-github-fsouza-go-dockerclient-dev golang-github-fullsailor-pkcs7-dev golang-github-fxamacker-cbor-dev
golang-github-gabriel-vasile-mimetype-dev golang-github-garyburd-redigo-dev
golang-github-gatherstars-com-jwz-dev golang-github-gcla-gowid-dev golang-github-gdamore-tcell-dev
golang-github-gdamore-tcell.v2-dev golang-github-geertjohan-go.rice-dev golang-github-getkin-kin-openapi-dev
golang-github-getsentry-sentry-go-dev golang-github-gin-gonic-gin-dev golang-github-git-lfs-git-lfs-dev
golang-github-git-lfs-gitobj-dev golang-github-go-chi-chi-dev golang-github-go-co-op-gocron-dev
golang-github-go-debos-fakemachine-dev golang-github-go-easygen-easygen-dev golang-github-go-git-go-billy-dev
golang-github-go-git-go-git-dev golang-github-go-ini-ini-dev golang-github-go-kit-kit-dev
golang-github-go-ldap-ldap-dev golang-github-go-openapi-analysis-dev golang-github-go-openapi-loads-dev
golang-github-go-openapi-runtime-dev golang-github-go-openapi-spec-dev golang-github-go-openapi-strfmt-dev
golang-github-go-openapi-swag-dev golang-github-go-openapi-validate-dev
golang-github-go-ozzo-ozzo-validation.v4-dev golang-github-go-playground-validator-v10-dev
golang-github-go-restruct-restruct-dev golang-github-go-resty-resty-dev golang-github-go-xorm-builder-dev
golang-github-gobwas-glob-dev golang-github-goccmack-gocc-dev golang-github-goccy-go-yaml-dev
golang-github-gocql-gocql-dev golang-github-gogo-googleapis-dev golang-github-gogo-protobuf-dev
golang-github-golang-jwt-jwt-dev golang-github-golang-leveldb-dev golang-github-golang-mock-dev
golang-github-golang-protobuf-1-3-dev golang-github-golang-protobuf-1-5-dev golang-github-golang-snappy-dev
golang-github-gomarkdown-markdown-dev golang-github-gomodule-redigo-dev golang-github-google-blueprint-dev
golang-github-google-certificate-transparency-dev golang-github-google-go-cmp-dev
golang-github-google-go-dap-dev golang-github-google-go-github-dev golang-github-google-gopacket-dev
golang-github-google-gousb-dev golang-github-google-martian-dev golang-github-google-nftables-dev
golang-github-google-pprof-dev golang-github-google-wire-dev golang-github-googleapis-gnostic-dev
golang-github-googlecloudplatform-cloudsql-proxy-dev golang-github-gopacket-gopacket-dev
golang-github-gophercloud-gophercloud-dev golang-github-gophercloud-utils-dev
golang-github-gopherjs-gopherjs-dev golang-github-gorilla-handlers-dev golang-github-gorilla-mux-dev
golang-github-gorilla-websocket-dev golang-github-gosnmp-gosnmp-dev
golang-github-gotestyourself-gotest.tools-dev golang-github-gotk3-gotk3-dev golang-github-grafana-regexp-dev
golang-github-graph-gophers-graphql-go-dev golang-github-grpc-ecosystem-go-grpc-middleware-dev
golang-github-grpc-ecosystem-go-grpc-prometheus-dev golang-github-grpc-ecosystem-grpc-gateway-dev
golang-github-gtank-cryptopasta-dev golang-github-hanwen-go-fuse-dev golang-github-hashicorp-go-msgpack-dev
golang-github-henvic-httpretty-dev golang-github-hetznercloud-hcloud-go-dev
golang-github-hirochachacha-go-smb2-dev golang-github-hjfreyer-taglib-go-dev
golang-github-hmrc-vmware-govcd-dev golang-github-hodgesds-perf-utils-dev golang-github-huin-goupnp-dev
golang-github-hydrogen18-stalecucumber-dev golang-github-ianlancetaylor-demangle-dev
golang-github-igm-sockjs-go-dev golang-github-influxdata-go-syslog-dev
golang-github-influxdata-influxdb1-client-dev golang-github-influxdata-influxql-dev
golang-github-influxdata-toml-dev golang-github-influxdata-yarpc-dev golang-github-influxdb-influxdb-dev
golang-github-insomniacslk-dhcp-dev golang-github-intel-goresctrl-dev golang-github-intel-tfortools-dev
golang-github-ionos-cloud-sdk-go-dev golang-github-iovisor-gobpf-dev golang-github-itchyny-go-flags-dev
golang-github-itchyny-gojq-dev golang-github-jackc-pgconn-dev golang-github-jackc-pgproto3-v2-dev
golang-github-jackc-pgtype-dev golang-github-jackc-pgx-v4-dev golang-github-jacobsa-bazilfuse-dev
golang-github-jacobsa-crypto-dev golang-github-jacobsa-fuse-dev golang-github-jacobsa-gcloud-dev
golang-github-jacobsa-oglematchers-dev golang-github-jacobsa-oglemock-dev golang-github-jamesclonk-vultr-dev
golang-github-jamiealquiza-tachymeter-dev golang-github-jcmturner-gokrb5.v8-dev
golang-github-jcmturner-rpc.v2-dev golang-github-jdkato-prose-dev golang-github-jedib0t-go-pretty-dev
golang-github-jessevdk-go-flags-dev golang-github-jhillyerd-enmime-dev golang-github-jinzhu-gorm-dev
golang-github-jmespath-go-jmespath-dev golang-github-jmoiron-sqlx-dev golang-github-jsimonetti-rtnetlink-dev
golang-github-json-iterator-go-dev golang-github-jszwec-csvutil-dev golang-github-jung-kurt-gofpdf-dev
golang-github-kata-containers-govmm-dev golang-github-kentik-patricia-dev golang-github-kisom-goutils-dev
golang-github-kjk-lzma-dev golang-github-klauspost-cpuid-dev golang-github-klauspost-pgzip-dev
golang-github-klauspost-reedsolomon-dev golang-github-knadh-koanf-dev golang-github-knetic-govaluate-dev
golang-github-knqyf263-go-cpe-dev golang-github-knqyf263-go-rpm-version-dev golang-github-kong-go-kong-dev
golang-github-kubernetes-gengo-dev golang-github-kurin-blazer-dev golang-github-la5nta-wl2k-go-dev
golang-github-labstack-echo-dev golang-github-leonelquinteros-gotext-dev golang-github-lib-pq-dev
golang-github-libgit2-git2go-v34-dev golang-github-libvirt-libvirt-go-dev
golang-github-lightstep-lightstep-tracer-common-dev golang-github-likexian-gokit-dev
golang-github-linkedin-goavro-dev golang-github-linuxkit-virtsock-dev golang-github-lucas-clemente-quic-go-dev
golang-github-lucasb-eyer-go-colorful-dev golang-github-mailru-easyjson-dev golang-github-markbates-goth-dev
golang-github-marten-seemann-qtls-go1-19-dev golang-github-maruel-panicparse-dev
golang-github-masterminds-sprig-dev golang-github-mattn-go-sqlite3-dev golang-github-mdlayher-dhcp6-dev
golang-github-mdlayher-netlink-dev golang-github-mendersoftware-go-lib-micro-dev
golang-github-mendersoftware-mender-artifact-dev golang-github-mendersoftware-openssl-dev
golang-github-mesos-mesos-go-dev golang-github-mholt-acmez-dev golang-github-microcosm-cc-bluemonday-dev
golang-github-micromdm-scep-dev golang-github-miekg-dns-dev golang-github-miekg-mmark-dev
golang-github-miekg-pkcs11-dev golang-github-minio-blake2b-simd-dev golang-github-minio-minio-go-dev
golang-github-minio-minio-go-v7-dev golang-github-minio-sha256-simd-dev golang-github-mitch000001-go-hbci-dev
golang-github-mitchellh-mapstructure-dev golang-github-mmarkdown-mmark-dev golang-github-mmcdole-gofeed-dev
golang-github-mmcloughlin-avo-dev golang-github-moby-sys-dev golang-github-montanaflynn-stats-dev
golang-github-mozillazg-go-pinyin-dev golang-github-mreiferson-go-snappystream-dev
golang-github-mrjones-oauth-dev golang-github-muka-go-bluetooth-dev golang-github-naoina-toml-dev
golang-github-nats-io-go-nats-dev golang-github-nats-io-jwt-dev golang-github-nats-io-nats-server-dev
golang-github-nbutton23-zxcvbn-go-dev golang-github-ncw-swift-dev golang-github-ncw-swift-v2-dev
golang-github-nebulouslabs-bolt-dev golang-github-nebulouslabs-ed25519-dev
golang-github-nebulouslabs-go-upnp-dev golang-github-newrelic-go-agent-dev
golang-github-nicksnyder-go-i18n.v2-dev golang-github-niklasfasching-go-org-dev golang-github-nlopes-slack-dev
golang-github-nytimes-gziphandler-dev golang-github-onsi-ginkgo-dev
golang-github-opencontainers-image-spec-dev golang-github-opencontainers-runc-dev
golang-github-opencontainers-runtime-tools-dev golang-github-openprinting-goipp-dev
golang-github-openshift-api-dev golang-github-openshift-imagebuilder-dev golang-github-opensuse-umoci-dev
golang-github-openzipkin-zipkin-go-dev golang-github-optiopay-kafka-dev golang-github-osrg-gobgp-dev
golang-github-packethost-packngo-dev golang-github-paulrosania-go-charset-dev golang-github-paypal-gatt-dev
golang-github-pborman-getopt-dev golang-github-pelletier-go-toml-dev golang-github-pelletier-go-toml.v2-dev
golang-github-perimeterx-marshmallow-dev golang-github-pierrec-lz4-dev golang-github-pingcap-check-dev
golang-github-pion-dtls.v2-dev golang-github-pion-ice.v2-dev golang-github-pion-interceptor-dev
golang-github-pion-rtcp-dev golang-github-pion-rtp-dev golang-github-pion-sctp-dev
golang-github-pion-srtp.v2-dev golang-github-pion-stun-dev golang-github-pion-transport-dev
golang-github-pion-turn.v2-dev golang-github-pion-webrtc.v3-dev golang-github-pires-go-proxyproto-dev
golang-github-pkg-diff-dev golang-github-pkg-sftp-dev golang-github-pointlander-peg-dev
golang-github-pquerna-ffjson-dev golang-github-prometheus-alertmanager-dev
golang-github-prometheus-client-golang-dev golang-github-prometheus-common-dev
golang-github-prometheus-exporter-toolkit-dev golang-github-prometheus-procfs-dev
golang-github-protonmail-go-crypto-dev golang-github-protonmail-gopenpgp-dev
golang-github-psanford-wormhole-william-dev golang-github-puerkitobio-goquery-dev
golang-github-pzhin-go-sophia-dev golang-github-rabbitmq-amqp091-go-dev golang-github-rclone-rclone-dev
golang-github-rcrowley-go-metrics-dev golang-github-revel-revel-dev golang-github-reviewdog-errorformat-dev
golang-github-rickb777-date-dev golang-github-rivo-tview-dev golang-github-rivo-uniseg-dev
golang-github-rjeczalik-notify-dev golang-github-roaringbitmap-roaring-dev golang-github-robertkrimen-otto-dev
golang-github-rogpeppe-go-internal-dev golang-github-rootless-containers-rootlesskit-dev
golang-github-rs-zerolog-dev golang-github-russellhaering-goxmldsig-dev golang-github-russross-blackfriday-dev
golang-github-russross-blackfriday-v2-dev golang-github-rwcarlsen-goexif-dev
golang-github-samuel-go-zookeeper-dev golang-github-sap-go-hdb-dev golang-github-scaleway-scaleway-sdk-go-dev
golang-github-schollz-closestmatch-dev golang-github-segmentio-kafka-go-dev golang-github-sergi-go-diff-dev
golang-github-shenwei356-bio-dev golang-github-shirou-gopsutil-dev golang-github-shopify-sarama-dev
golang-github-shurcool-githubv4-dev golang-github-siddontang-go-dev golang-github-sirupsen-logrus-dev
golang-github-skip2-go-qrcode-dev golang-github-slack-go-slack-dev golang-github-slackhq-nebula-dev
golang-github-smallstep-certificates-dev golang-github-smallstep-cli-dev
golang-github-smartystreets-assertions-dev golang-github-smartystreets-goconvey-dev
golang-github-spf13-afero-dev golang-github-spf13-cobra-dev golang-github-spf13-pflag-dev
golang-github-spf13-viper-dev golang-github-streadway-amqp-dev golang-github-stretchr-objx-dev
golang-github-stretchr-testify-dev golang-github-svanharmelen-jsonapi-dev golang-github-sylabs-sif-dev
golang-github-syncthing-notify-dev golang-github-syndtr-goleveldb-dev golang-github-tdewolff-minify-dev
golang-github-tdewolff-parse-dev golang-github-tealeg-xlsx-dev golang-github-teambition-rrule-go-dev
golang-github-templexxx-reedsolomon-dev golang-github-thalesignite-crypto11-dev
golang-github-thedevsaddam-gojsonq-dev golang-github-thoas-go-funk-dev
golang-github-thomsonreuterseikon-go-ntlm-dev golang-github-tideland-golib-dev
golang-github-tidwall-buntdb-dev golang-github-tidwall-gjson-dev golang-github-tinylib-msgp-dev
golang-github-tjfoc-gmsm-dev golang-github-tklauser-go-sysconf-dev golang-github-tombuildsstuff-giovanni-dev
golang-github-tonistiigi-fsutil-dev golang-github-traefik-yaegi-dev golang-github-ua-parser-uap-go-dev
golang-github-ugorji-go-codec-dev golang-github-ulikunitz-xz-dev golang-github-urfave-cli-dev
golang-github-urfave-cli-v2-dev golang-github-valyala-fasthttp-dev golang-github-valyala-fastjson-dev
golang-github-valyala-quicktemplate-dev golang-github-varlink-go-dev golang-github-vbatts-tar-split-dev
golang-github-vbauerster-mpb-dev golang-github-vektah-gqlparser-dev golang-github-viant-toolbox-dev
golang-github-victoriametrics-metricsql-dev golang-github-victoriametrics-victoriametrics-dev
golang-github-virtuald-go-ordered-json-dev golang-github-vishvananda-netlink-dev
golang-github-vividcortex-mysqlerr-dev golang-github-vmihailenco-msgpack.v5-dev
golang-github-vmware-govmomi-dev golang-github-vmware-photon-controller-go-sdk-dev
golang-github-vulcand-oxy-dev golang-github-vultr-govultr-dev golang-github-wader-gojq-dev
golang-github-wader-readline-dev golang-github-weaveworks-mesh-dev golang-github-weppos-publicsuffix-go-dev
golang-github-xanzy-go-cloudstack-dev golang-github-xanzy-go-gitlab-dev golang-github-xdg-go-stringprep-dev
golang-github-xeipuuv-gojsonschema-dev golang-github-xenolf-lego-dev golang-github-xhit-go-simple-mail-dev
golang-github-xi2-xz-dev golang-github-xtaci-kcp-dev golang-github-yl2chen-cidranger-dev
golang-github-yourbasic-graph-dev golang-github-yuin-goldmark-dev golang-github-yuin-goldmark-emoji-dev
golang-github-yuin-gopher-lua-dev golang-github-zclconf-go-cty-dev golang-github-zclconf-go-cty-yaml-dev
golang-github-zenazn-goji-dev golang-github-ziutek-mymysql-dev golang-github-zorkian-go-datadog-api-dev
golang-github-zyedidia-tcell-dev golang-go.opencensus-dev golang-go.uber-atomic-dev golang-go.uber-zap-dev
golang-go4-dev golang-gocloud-dev golang-golang-x-arch-dev golang-golang-x-crypto-dev golang-golang-x-exp-dev
golang-golang-x-image-dev golang-golang-x-mod-dev golang-golang-x-net-dev golang-golang-x-oauth2-dev
golang-golang-x-sys-dev golang-golang-x-tools-dev golang-golang-x-vuln-dev golang-golang.zx2c4-wireguard-dev
golang-gomega-dev golang-gonum-v1-plot-dev golang-google-appengine-dev golang-google-cloud-dev
golang-google-grpc-dev golang-google-protobuf-dev golang-gopkg-alecthomas-kingpin.v2-dev
golang-gopkg-check.v1-dev golang-gopkg-h2non-gock.v1-dev golang-gopkg-ini.v1-dev
golang-gopkg-jcmturner-gokrb5.v5-dev golang-gopkg-mgo.v2-dev golang-gopkg-neurosnap-sentences.v1-dev
golang-gopkg-olivere-elastic.v2-dev golang-gopkg-olivere-elastic.v5-dev golang-gopkg-pg.v5-dev
golang-gopkg-redis.v2-dev golang-gopkg-redis.v5-dev golang-gopkg-rethinkdb-rethinkdb-go.v6-dev
golang-gopkg-square-go-jose.v1-dev golang-gopkg-square-go-jose.v2-dev golang-gopkg-src-d-go-git.v4-dev
golang-gopkg-telebot.v3-dev golang-gopkg-vmihailenco-msgpack.v2-dev golang-gopkg-yaml.v2-dev
golang-gopkg-yaml.v3-dev golang-gvisor-gvisor-dev golang-honnef-go-tools-dev golang-inet-netstack-dev
golang-k8s-klog-dev golang-k8s-kube-openapi-dev golang-k8s-sigs-json-dev
golang-k8s-sigs-structured-merge-diff-dev golang-k8s-utils-dev golang-lukechampine-blake3-dev
golang-mongodb-mongo-driver-dev golang-mvdan-sh-dev golang-nhooyr-websocket-dev golang-opentelemetry-otel-dev
golang-oras-oras-go-dev golang-pault-go-debian-dev golang-refraction-networking-utls-dev
golang-rsc-binaryregexp-dev golang-rsc-pdf-dev golang-snowflake-dev golang-starlark-dev
golang-step-cli-utils-dev golang-step-crypto-dev golang-step-linkedca-dev golang-thrift-dev
golang-v2ray-core-dev
""".split()

# Debian bookworm librust-*-dev binary packages (crate sources): 813
RUST_DEBS: list[str] = """
librust-addr2line-dev librust-aes-soft-dev librust-ahash-0.7-dev librust-ahash-dev librust-alloc-no-stdlib-dev
librust-alsa-sys-dev librust-ammonia-dev librust-anes-dev librust-ansi-term-dev librust-app-dirs2-dev
librust-approx-dev librust-ar-dev librust-arbitrary-dev librust-arc-swap-dev librust-argh-derive-dev
librust-argh-dev librust-argon2rs-dev librust-argparse-dev librust-arrayvec-0.5-dev librust-arrayvec-dev
librust-ascii-dev librust-ashpd-dev librust-asn1-dev librust-assert-cli-dev librust-assert-cmd-dev
librust-assert-json-diff-dev librust-async-broadcast-dev librust-async-channel-dev librust-async-executor-dev
librust-async-fs-dev librust-async-io-dev librust-async-lock-dev librust-async-net-dev
librust-async-process-dev librust-async-std-dev librust-async-task-dev librust-async-trait-dev librust-atk-dev
librust-atk-sys-dev librust-atlatl-dev librust-atom-dev librust-atomic-dev librust-autocfg-dev
librust-av-metrics-dev librust-average-dev librust-backoff-dev librust-backtrace-dev librust-base64ct-dev
librust-bat-dev librust-bcder-dev librust-beef-dev librust-bencher-dev librust-bigdecimal-dev
librust-binary-heap-plus-dev librust-bincode-dev librust-bindgen-dev librust-bit-set-dev librust-bit-vec-dev
librust-bitstream-io-dev librust-blake2-rfc-dev librust-blake2b-simd-0.5-dev librust-blake2b-simd-dev
librust-blake2s-simd-dev librust-blake3-dev librust-block-modes-dev librust-blocking-dev
librust-brotli-decompressor-dev librust-bs58-dev librust-bstr-dev librust-bumpalo-dev librust-byte-unit-dev
librust-bytecount-dev librust-bytemuck-dev librust-byteorder-dev librust-bzip2-dev librust-c2-chacha-dev
librust-cairo-rs-dev librust-cairo-sys-rs-dev librust-calloop-dev librust-camino-dev librust-capnp-dev
librust-capnp-rpc-dev librust-caps-dev librust-capstone-dev librust-cargo-binutils-dev librust-cargo-c-dev
librust-cargo-dev librust-cargo-lock-dev librust-cargo-metadata-dev librust-cargo-util-dev
librust-cassowary-dev librust-cast-dev librust-castaway-dev librust-cc-dev librust-cexpr-dev
librust-cfg-expr-dev librust-chrono-humanize-dev librust-chrono-tz-dev librust-ciborium-ll-dev
librust-cipher-dev librust-clang-sys-dev librust-clap-2-dev librust-clap-3-dev librust-clap-complete-3-dev
librust-clap-complete-dev librust-clap-derive-3-dev librust-clap-derive-dev librust-cloudabi-dev
librust-cmake-dev librust-codespan-reporting-dev librust-colorful-dev librust-colorsys-dev librust-combine-dev
librust-compiler-builtins-dev librust-concurrent-queue-dev librust-config-dev librust-configparser-dev
librust-console-dev librust-const-fn-dev librust-const-format-dev librust-const-format-proc-macros-dev
librust-conv-dev librust-cookie-dev librust-cookie-factory-dev librust-cookie-store-dev
librust-core-foundation-dev librust-core-foundation-sys-dev librust-core-graphics-dev librust-cpal-dev
librust-cpp-build-dev librust-cpp-demangle-dev librust-cpp-syn-dev librust-cpp-synom-dev librust-crc32fast-dev
librust-crdts-dev librust-criterion-0.3-dev librust-criterion-dev librust-criterion-plot-dev
librust-crossbeam-0.3-dev librust-crossbeam-deque-dev librust-crossbeam-epoch-dev librust-crossbeam-queue-dev
librust-crossbeam-utils-dev librust-crossfont-dev librust-crossterm-dev librust-crossterm-winapi-dev
librust-cryptoki-sys-dev librust-csv-core-dev librust-csv-dev librust-ctrlc-dev librust-curl-dev
librust-curl-sys-dev librust-cursive-core-dev librust-cursive-dev librust-cxx-build-dev librust-cxx-dev
librust-cxx-gen-dev librust-cxxbridge-macro-dev librust-daemonize-dev librust-darling-core-dev
librust-darling-dev librust-dashmap-dev librust-data-encoding-dev librust-data-url-dev librust-datetime-dev
librust-dbus-0.2-dev librust-dbus-dev librust-dbus-tree-dev librust-dbus-udisks2-dev librust-debcargo-dev
librust-debugid-dev librust-deflate-dev librust-delog-dev librust-der-parser-dev librust-derivative-dev
librust-derive-builder-core-dev librust-derive-builder-dev librust-derive-getters-dev librust-derive-more-dev
librust-dhcp4r-dev librust-dialoguer-dev librust-diesel-derives-dev librust-difference-dev
librust-digest-0.9-dev librust-digest-dev librust-directories-1-dev librust-directories-dev librust-dirs-dev
librust-dissimilar-dev librust-dlv-list-dev librust-dns-lookup-dev librust-dns-parser-dev librust-docopt-dev
librust-document-features-dev librust-dotenv-dev librust-downcast-rs-dev librust-dtoa-dev librust-duct-dev
librust-easy-cast-dev librust-easy-ext-dev librust-educe-dev librust-either-dev librust-elsa-dev
librust-ena-dev librust-encode-unicode-dev librust-encoding-dev librust-encoding-index-singlebyte-dev
librust-encoding-rs-dev librust-encoding-rs-io-dev librust-enum-map-dev librust-enumber-dev
librust-enumset-dev librust-env-logger-0.7-dev librust-erased-serde-dev librust-err-derive-dev
librust-error-chain-dev librust-euclid-0.19-dev librust-euclid-dev librust-eui48-dev
librust-event-listener-dev librust-exacl-dev librust-extprim-dev librust-eyre-dev librust-failure-dev
librust-fallible-iterator-dev librust-fancy-regex-dev librust-fasteval-dev librust-fastrand-dev
librust-fd-lock-dev librust-fern-dev librust-filedescriptor-dev librust-filetime-dev librust-findshlibs-dev
librust-fix-getters-rules-dev librust-fixedbitset-dev librust-flate2-dev librust-flexiber-dev
librust-float-cmp-dev librust-float-eq-dev librust-flume-dev librust-fomat-macros-dev librust-font-kit-dev
librust-fragile-dev librust-freetype-dev librust-freetype-rs-dev librust-freetype-sys-dev librust-fs-extra-dev
librust-fs2-dev librust-fst-dev librust-fuchsia-zircon-dev librust-futures-codec-dev librust-futures-core-dev
librust-futures-dev librust-futures-executor-dev librust-futures-lite-dev librust-futures-locks-dev
librust-futures-task-dev librust-futures-test-dev librust-futures-timer-dev librust-gdk-dev
librust-gdk-pixbuf-dev librust-gdk-pixbuf-sys-dev librust-gdk-sys-dev librust-gdk4-dev librust-gdk4-sys-dev
librust-gdk4-x11-dev librust-gdkx11-dev librust-generator-dev librust-generic-array-dev librust-geo-types-dev
librust-getopts-dev librust-getrandom-dev librust-getset-dev librust-gettext-dev librust-gettext-rs-dev
librust-ghost-dev librust-gif-dev librust-gio-dev librust-gio-sys-dev librust-git-absorb-dev
librust-git-testament-dev librust-git2-dev librust-gl-generator-dev librust-glib-dev librust-glib-macros-dev
librust-glib-sys-dev librust-glob-dev librust-globwalk-dev librust-glutin-dev librust-gobject-sys-dev
librust-goblin-dev librust-graphene-rs-dev librust-graphene-sys-dev librust-grep-cli-dev
librust-grep-matcher-dev librust-grep-printer-dev librust-grep-regex-dev librust-grep-searcher-dev
librust-gsk4-dev librust-gsk4-sys-dev librust-gstreamer-audio-sys-dev librust-gstreamer-base-sys-dev
librust-gstreamer-sys-dev librust-gstreamer-video-sys-dev librust-gtk-dev librust-gtk-sys-dev librust-gtk4-dev
librust-gtk4-sys-dev librust-gumdrop-derive-dev librust-gumdrop-dev librust-half-dev librust-harfbuzz-rs-dev
librust-harfbuzz-sys-dev librust-hashlink-dev librust-heck-dev librust-hex-dev librust-hexplay-dev
librust-hexyl-dev librust-hkdf-dev librust-html-escape-dev librust-html2text-dev librust-html5ever-dev
librust-http-body-dev librust-httparse-dev librust-humantime-dev librust-hyper-rustls-dev
librust-hyphenation-dev librust-iana-time-zone-dev librust-idna-dev librust-if-addrs-dev librust-indicatif-dev
librust-indoc-dev librust-inflate-dev librust-inflector-dev librust-inotify-dev librust-insta-dev
librust-intrusive-collections-dev librust-io-lifetimes-dev librust-ipconfig-dev librust-ipfs-unixfs-dev
librust-ipnet-dev librust-ipnetwork-dev librust-isahc-dev librust-iso8601-dev librust-jargon-args-dev
librust-jemalloc-sys-dev librust-jobserver-dev librust-jpeg-decoder-dev librust-js-int-dev librust-js-sys-dev
librust-json-dev librust-jsonwebtoken-dev librust-khronos-egl-dev librust-kstring-dev librust-kurbo-dev
librust-lab-dev librust-lalrpop-dev librust-language-tags-dev librust-lazy-regex-dev librust-lazycell-dev
librust-lewton-dev librust-lexical-core-dev librust-lexopt-dev librust-libflate-dev librust-libgit2-sys-dev
librust-libloading-dev librust-libm-dev librust-libmount-dev librust-libnghttp2-sys-dev
librust-libpulse-sys-dev librust-libslirp-dev librust-libsodium-sys-dev librust-libsqlite3-sys-dev
librust-libssh2-sys-dev librust-libsystemd-dev librust-libudev-dev librust-linear-map-dev
librust-linked-hash-map-dev librust-linkify-dev librust-linux-perf-data-dev
librust-linux-perf-event-reader-dev librust-linux-raw-sys-dev librust-litrs-dev librust-lmdb-dev
librust-locale-config-dev librust-locale-dev librust-lock-api-dev librust-loggerv-dev librust-lru-dev
librust-lscolors-dev librust-lua52-sys-dev librust-lyon-geom-dev librust-lyon-path-dev librust-mach-o-sys-dev
librust-macho-unwind-info-dev librust-macro-attr-dev librust-man-dev librust-markdown-dev
librust-markup5ever-dev librust-markup5ever-rcdom-dev librust-maxminddb-dev librust-memmap-dev
librust-memmap2-dev librust-merge-dev librust-mime-dev librust-mime-guess-dev librust-minimal-lexical-dev
librust-miniz-oxide-dev librust-mio-0.6-dev librust-mio-extras-dev librust-mio-named-pipes-dev
librust-mio-uds-dev librust-miow-dev librust-multihash-dev librust-multimap-dev librust-nanorand-dev
librust-native-tls-dev librust-neli-proc-macros-dev librust-net2-dev librust-netlink-packet-core-dev
librust-netlink-packet-route-dev librust-netlink-proto-dev librust-netlink-sys-dev librust-newtype-derive-dev
librust-nitrokey-dev librust-nom-4-dev librust-nom-derive-dev librust-nom-derive-impl-dev
librust-nom-locate-dev librust-normpath-dev librust-notify-dev librust-ntapi-dev librust-nu-ansi-term-dev
librust-num-complex-dev librust-num-cpus-dev librust-num-derive-dev librust-num-enum-derive-dev
librust-num-enum-dev librust-num-format-dev librust-num-integer-dev librust-num-rational-dev
librust-nvml-wrapper-dev librust-oauth2-dev librust-ogg-dev librust-once-cell-dev librust-onig-dev
librust-onig-sys-dev librust-openssl-dev librust-openssl-sys-dev librust-ord-subset-dev
librust-ordered-float-dev librust-ordered-multimap-dev librust-ordered-stream-dev librust-ordermap-dev
librust-os-display-dev librust-os-info-dev librust-os-pipe-dev librust-os-str-bytes-dev
librust-ouroboros-macro-dev librust-owning-ref-dev librust-oxhttp-dev librust-oxilangtag-dev librust-oxiri-dev
librust-pam-sys-dev librust-pango-dev librust-pango-sys-dev librust-parity-wasm-dev librust-parking-lot-dev
librust-parse-zoneinfo-dev librust-parsec-interface-dev librust-password-hash-dev librust-paste-dev
librust-path-abs-dev librust-path-slash-dev librust-pathfinder-geometry-dev librust-pathfinder-simd-dev
librust-pbr-dev librust-pcre2-dev librust-pcre2-sys-dev librust-pcsc-dev librust-pem-dev
librust-perfrecord-mach-ipc-rendezvous-dev librust-pest-derive-dev librust-pest-generator-dev
librust-pest-meta-dev librust-pico-args-dev librust-pin-project-dev librust-pin-project-internal-dev
librust-pin-project-lite-dev librust-pkg-config-dev librust-platform-info-dev librust-plist-dev
librust-plotters-backend-dev librust-plotters-bitmap-dev librust-plotters-dev librust-png-dev
librust-polling-dev librust-portable-atomic-dev librust-postgres-protocol-dev librust-postgres-types-dev
librust-ppv-lite86-dev librust-pq-sys-dev librust-predicates-dev librust-pretty-assertions-dev
librust-prettytable-rs-dev librust-proc-macro-error-dev librust-proc-macro-hack-dev librust-procfs-dev
librust-progressing-dev librust-prometheus-dev librust-proptest-dev librust-prost-build-dev
librust-prost-derive-dev librust-prost-dev librust-prost-types-dev librust-protobuf-codegen-dev
librust-protobuf-codegen-pure-dev librust-protobuf-dev librust-protobuf-support-dev librust-psa-crypto-dev
librust-psa-crypto-sys-dev librust-psm-dev librust-publicsuffix-dev librust-pulldown-cmark-dev
librust-pyo3-build-config-dev librust-pyo3-dev librust-pyo3-ffi-dev librust-pyo3-macros-backend-dev
librust-python3-dll-a-dev librust-qrcode-dev librust-qrcodegen-dev librust-quantiles-dev
librust-quick-error-dev librust-quick-protobuf-dev librust-quick-xml-dev librust-quickcheck-dev
librust-quinn-dev librust-quinn-proto-dev librust-quinn-udp-dev librust-r2d2-dev librust-radium-dev
librust-radix-trie-dev librust-rand-chacha-dev librust-rand-core-dev librust-rand-distr-dev
librust-rand-isaac-dev librust-rand-pcg-dev librust-rand-xoshiro-dev librust-rav1e-dev
librust-raw-window-handle-dev librust-rctree-dev librust-redox-syscall-dev librust-regex-automata-dev
librust-remain-dev librust-rend-dev librust-reqwest-dev librust-resolv-conf-dev librust-rgb-dev
librust-rkyv-derive-dev librust-rkyv-dev librust-rle-decode-fast-dev librust-rlimit-dev librust-rmp-dev
librust-rmp-serde-dev librust-ron-dev librust-roxmltree-dev librust-rpassword-dev librust-rsass-dev
librust-rtnetlink-dev librust-ruma-common-dev librust-ruma-macros-dev librust-rusqlite-dev
librust-rust-argon2-dev librust-rust-cast-dev librust-rust-decimal-dev librust-rust-ini-dev
librust-rustc-demangle-dev librust-rustc-serialize-dev librust-rustc-version-dev librust-rustdoc-stripper-dev
librust-rustfix-dev librust-rustls-dev librust-rustversion-dev librust-rusty-fork-dev librust-rusty-pool-dev
librust-rustyline-dev librust-ryu-dev librust-safe-transmute-dev librust-schannel-dev librust-scroll-dev
librust-sct-dev librust-sctk-adwaita-dev librust-seahash-dev librust-secret-service-dev
librust-security-framework-sys-dev librust-selinux-dev librust-semver-0.9-dev librust-semver-dev
librust-semver-parser-0.7-dev librust-semver-parser-dev librust-separator-dev librust-serde-bytes-dev
librust-serde-cbor-dev librust-serde-derive-dev librust-serde-ignored-dev librust-serde-path-to-error-dev
librust-serde-stacker-dev librust-serde-test-dev librust-serde-urlencoded-dev librust-serde-value-dev
librust-serde-xml-rs-dev librust-serde-yaml-dev librust-serial-test-dev librust-sha1collisiondetection-dev
librust-sha2-0.9-dev librust-sha3-dev librust-shadow-rs-dev librust-sharded-slab-dev librust-shellexpand-dev
librust-shrinkwraprs-dev librust-signal-hook-dev librust-signal-hook-registry-dev librust-simdutf8-dev
librust-similar-asserts-dev librust-similar-dev librust-simple-asn1-dev librust-simple-logger-dev
librust-simplecss-dev librust-simplelog-dev librust-siphasher-dev librust-skeptic-dev librust-slab-dev
librust-slog-async-dev librust-slog-dev librust-slog-term-dev librust-slotmap-dev librust-smallbitvec-dev
librust-smawk-dev librust-smithay-client-toolkit-dev librust-smithay-clipboard-dev librust-smol-dev
librust-snafu-derive-dev librust-snafu-dev librust-snap-dev librust-socket2-dev librust-socks-dev
librust-sop-dev librust-spin-dev librust-sptr-dev librust-stacker-dev librust-stackvector-dev
librust-starship-battery-dev librust-static-assertions-dev librust-stderrlog-dev librust-stfu8-dev
librust-streaming-stats-dev librust-string-cache-dev librust-stringprep-dev librust-strsim-dev
librust-structopt-derive-dev librust-structopt-dev librust-strum-macros-dev librust-subprocess-dev
librust-subtle-dev librust-sval-dev librust-svgtypes-dev librust-symbolic-common-dev librust-syn-mid-dev
librust-synstructure-dev librust-syntect-dev librust-sys-info-dev librust-sys-mount-dev librust-syscallz-dev
librust-sysctl-dev librust-sysinfo-dev librust-syslog-dev librust-system-deps-dev librust-tar-dev
librust-target-lexicon-dev librust-tendril-dev librust-tera-dev librust-term-dev librust-termcolor-dev
librust-termion-dev librust-termios-dev librust-test-case-dev librust-textwrap-dev librust-thiserror-impl-dev
librust-thread-local-dev librust-threadfin-dev librust-threadpool-dev librust-tiff-dev librust-time-0.1-dev
librust-time-macros-dev librust-tiny-http-dev librust-tiny-keccak-dev librust-tiny-skia-dev
librust-tiny-skia-path-dev librust-tinystr-dev librust-tinytemplate-dev librust-tinyvec-dev
librust-tls-parser-dev librust-tokio-native-tls-dev librust-tokio-postgres-dev librust-tokio-rustls-dev
librust-tokio-serde-dev librust-tokio-stream-dev librust-tokio-test-dev librust-totp-rs-dev
librust-tracing-attributes-dev librust-tracing-core-dev librust-tracing-futures-dev librust-tracing-log-dev
librust-tree-magic-mini-dev librust-tree-sitter-dev librust-tree-sitter-highlight-dev librust-treediff-dev
librust-trust-dns-client-dev librust-trust-dns-proto-dev librust-trust-dns-resolver-dev
librust-trust-dns-server-dev librust-trybuild-dev librust-ttf-parser-dev librust-ttrpc-dev librust-tui-dev
librust-typed-arena-dev librust-typed-builder-dev librust-typenum-dev librust-ucd-parse-dev
librust-ucd-trie-dev librust-ucd-util-dev librust-unic-langid-impl-dev librust-unic-segment-dev
librust-unic-ucd-segment-dev librust-unicase-dev librust-unicode-bidi-dev librust-unicode-ident-dev
librust-unicode-linebreak-dev librust-unicode-normalization-dev librust-unicode-script-dev
librust-unicode-segmentation-dev librust-unicode-width-dev librust-unicode-xid-dev librust-uniquote-dev
librust-unix-socket-dev librust-unsigned-varint-dev librust-uom-dev librust-ureq-dev librust-users-dev
librust-utf-8-dev librust-uuid-dev librust-v-frame-dev librust-valuable-dev librust-value-bag-dev
librust-vcpkg-dev librust-vec-map-dev librust-vergen-dev librust-version-check-dev librust-version-compare-dev
librust-version-sync-dev librust-versionize-derive-dev librust-vm-memory-dev librust-vm-superio-dev
librust-vt100-dev librust-vte-dev librust-wasm-bindgen-backend-dev librust-wasm-bindgen-dev
librust-wasm-bindgen-macro-support-dev librust-wasmer-enumset-dev librust-wayland-client-dev
librust-wayland-commons-dev librust-wayland-protocols-dev librust-wayland-scanner-dev
librust-wayland-server-dev librust-web-sys-dev librust-webpki-dev librust-weezl-dev librust-which-dev
librust-whoami-dev librust-widestring-dev librust-winapi-dev librust-winit-dev librust-winreg-dev
librust-wio-dev librust-wl-clipboard-rs-dev librust-x11-dev librust-x11-dl-dev librust-x11rb-dev
librust-xattr-dev librust-xcb-dev librust-xdg-dev librust-xi-unicode-dev librust-xkbcommon-dev
librust-xml-rs-dev librust-xml5ever-dev librust-xmlparser-dev librust-xor-name-dev librust-xz2-dev
librust-yaml-dev librust-yaml-rust-dev librust-yansi-dev librust-zbus-dev librust-zbus-macros-dev
librust-zerocopy-derive-dev librust-zeroize-derive-dev librust-zeroize-dev librust-zip-dev librust-zmq-dev
librust-zmq-sys-dev librust-zram-generator-dev librust-zstd-dev librust-zstd-safe-dev librust-zvariant-dev
""".split()

# Debian bookworm source packages, C: 65
C_SOURCES: list[str] = """
dpdk krb5 freerdp2 apr apr-util subversion neovim graphicsmagick libvpx dav1d openjpeg2 libwebp wpa tcpdump
libpcap unbound libarchive libsdl2 luajit lighttpd memcached lz4 libffi libunwind jemalloc mujs libxslt yajl
json-c libwebsockets h2o libev protobuf-c cmark libonig tre hyperscan libedit opus libvorbis libogg speex
giflib libtomcrypt libtommath libdrm mbedtls libxkbcommon wlroots libbsd libsamplerate portaudio19
libjpeg-turbo lcms2 utf8proc zopfli libdeflate libmaxminddb libsrtp2 libcoap3 nanopb libfyaml cmocka liburing
dhcpcd5
""".split()

# Debian bookworm source packages, Java: 44
JAVA_SOURCES: list[str] = """
tomcat9 jetty9 maven ant groovy libcommons-lang-java commons-pool2 libcommons-net-java commons-vfs
libcommons-jexl3-java httpcomponents-core jackson-annotations jackson-dataformat-yaml jackson-dataformat-xml
bouncycastle antlr4 antlr3 hsqldb libpdfbox2-java libapache-poi-java apache-log4j1.2 libslf4j-java mockito
jline3 picocli jcommander gradle maven-resolver plexus-archiver zookeeper netty-tcnative protobuf cglib
libcommons-logging-java ehcache osgi-core jakarta-activation libhamcrest-java libwoodstox-java
error-prone-java plexus-utils2 libokhttp-java surefire joda-convert
""".split()
