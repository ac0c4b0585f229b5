"""The held-out dev/test set for completion quality on real code we never trained on (issue #16, item 7).

    python -m bench.heldout [--splits dev test dev_langs test_langs]   # fetch (cached under data/heldout-src/),
                                                                      # build bench/data/heldout/

Why a set of our own: HumanEval/SantaCoder are for reporting, never tuning, and our corpus dev split is from
the packages we trained on.  These packages are in neither corpus manifest
(``dgcomplete/train/corpus_manifest.json``, tier 2; ``corpus_manifest_large.json``, tier 3) nor the reserved list (``tomlkit``, ``jsonschema``,
``python-dateutil``, ``luxon``, ``immer``: kept for an external check), nor ``../shared/data``; the builder
refuses to run if that stops being true.  Split *by package*: four Python and four JS/TS packages are
``dev`` (tune on them, ~600 cases), two Python and two JS/TS packages are ``test`` (report only, ~300
cases).  New packages are appended to :data:`PACKAGES`: a split draws its packages' cases in that order from
one random stream, so appending leaves every earlier case (and the other split) byte-identical.

Sources (exact versions, sha256-pinned; archives are cached, never committed), all permissively licensed:

=========================  =========  ============  =====  =====  ===============================================
package                    version    licence       lang   split  from
=========================  =========  ============  =====  =====  ===============================================
humanize                   4.11.0     MIT           py     dev    PyPI sdist (``src/humanize``)
tenacity                   9.0.0      Apache-2.0    py     dev    PyPI sdist (``tenacity``)
cachetools                 5.5.0      MIT           py     test   PyPI sdist (``src/cachetools``)
cattrs                     24.1.2     MIT           py     test   PyPI sdist (``src/cattrs``)
js-yaml                    4.1.0      MIT           js     dev    npm tarball (``lib``)
cac                        6.7.14     MIT           ts     dev    npm tarball (``deno``: the TypeScript source)
qs                         6.13.0     BSD-3-Clause  js     test   npm tarball (``lib``)
@tanstack/query-core       5.59.0     MIT           ts     test   npm tarball (``src``, without ``__tests__``)
wrapt                      1.16.0     BSD-2-Clause  py     dev    PyPI sdist (``src/wrapt``)
sortedcontainers           2.4.0      Apache-2.0    py     dev    PyPI sdist (``sortedcontainers``)
postcss                    8.4.47     MIT           js     dev    npm tarball (``lib``)
prosemirror-model          1.23.0     MIT           ts     dev    npm tarball (``src``)
=========================  =========  ============  =====  =====  ===============================================

Go, Rust, C and Java (splits ``dev_langs`` / ``test_langs``, ~300 cases each, about 75 per language; added
later, from Debian bookworm, which carries these languages' sources): Go and Rust from the ``-dev`` binary
packages (``.deb``), C and Java from the upstream tarball of the source package.  A language whose packages
are small takes 38 cases from each of two.  shopspring/decimal's ``decimal-go.go`` is left out: it is a copy
of Go's ``strconv/decimal.go``, which the corpus has (checked by line overlap with both corpus tiers).

=====================================  ==========  ==================  =====  ==========  ====================
package                                version     licence             lang   split       from
=====================================  ==========  ==================  =====  ==========  ====================
golang-github-masterminds-semver-dev   3.2.0-1     MIT                 go     dev_langs   .deb
golang-github-huandu-xstrings-dev      1.3.3-1     MIT                 go     dev_langs   .deb
librust-xxhash-rust-dev                0.8.5-3     BSL-1.0             rust   dev_langs   .deb
librust-better-panic-dev               0.3.0-1+b1  MIT                 rust   dev_langs   .deb
lilv                                   0.24.14     ISC                 c      dev_langs   orig tarball
commons-exec                           1.3         Apache-2.0          java   dev_langs   orig tarball
commons-csv                            1.9.0       Apache-2.0          java   dev_langs   orig tarball
golang-github-robfig-cron-dev          3.0.1-1     MIT                 go     test_langs  .deb
golang-github-shopspring-decimal-dev   1.2.0-2     MIT                 go     test_langs  .deb
librust-symbolic-demangle-dev          9.2.1-1     MIT                 rust   test_langs  .deb
librust-hmac-dev                       0.12.1-1    MIT OR Apache-2.0   rust   test_langs  .deb
libzip                                 1.7.3       BSD-3-Clause        c      test_langs  orig tarball
joda-time                              2.10.14     Apache-2.0          java   test_langs  orig tarball
=====================================  ==========  ==================  =====  ==========  ====================

Ruby and PHP (splits ``dev_ruby_php`` / ``test_ruby_php``, 300 cases each, 150 per language; added later, from
Debian bookworm's binary packages: a gem's ``lib/`` under ``/usr/share/rubygems-integration``, a PHP library under
``/usr/share/php``): languages no corpus tier has, so the shipped model never saw them; they measure what the
document, retrieval and the syntax layer give a user of a language the network does not know.

=====================================  ================  ============  =====  =============
package                                version           licence       lang   split
=====================================  ================  ============  =====  =============
ruby-thor                              1.2.1-2           MIT           ruby   dev_ruby_php
ruby-mustermann                        3.0.0-2           MIT           ruby   dev_ruby_php
php-monolog                            2.9.1-1           MIT           php    dev_ruby_php
php-composer-semver                    3.3.2-1           MIT           php    dev_ruby_php
ruby-tzinfo                            2.0.5-1           MIT           ruby   test_ruby_php
ruby-kramdown                          2.4.0-2           MIT           ruby   test_ruby_php
php-league-commonmark                  2.3.9-1+deb12u1   BSD-3-Clause  php    test_ruby_php
php-guzzlehttp-psr7                    2.4.5-1+deb12u1   MIT           php    test_ruby_php
=====================================  ================  ============  =====  =============

C++ (splits ``dev_cpp`` / ``test_cpp``, about 150 cases each; added later): the upstream tarballs of Debian bookworm
source packages, ``.cc``/``.cpp`` files only (a ``.h`` is read as C). No corpus tier has C++ (its C is ``.c``/``.h``),
so the network saw only the C it shares. Files tree-sitter-cpp cannot parse cleanly (macro-heavy ones) are skipped
by the builder, as in every split.

=====================================  ==========  ============  =====  ==========
package                                version     licence       lang   split
=====================================  ==========  ============  =====  ==========
leveldb                                1.23        BSD-3-Clause  cpp    dev_cpp
double-conversion                      3.2.1       BSD-3-Clause  cpp    dev_cpp
snappy                                 1.1.9       BSD-3-Clause  cpp    dev_cpp
re2                                    20220601    BSD-3-Clause  cpp    test_cpp
yaml-cpp                               0.7.0       MIT           cpp    test_cpp
=====================================  ==========  ============  =====  ==========

Cases are built the way an editor sees them (fixed seed): *whole-line*: a code line (not a comment, not inside
a string or docstring, >= 4 non-space characters) whose content after its indentation is removed, the
indentation kept (editors auto-indent), cursor after it; *mid-line*: such a line cut at a token boundary at
least 2 characters into its content (about 30 % of cuts fall inside an identifier), the rest of the line
dropped.  In both kinds the document is ``text[:offset] + text[end_of_line:]`` and the expected completion is
``text[offset:end_of_line].rstrip()``, so a case stores only ``file`` and ``offset`` (:func:`case_document`).
Each case also names up to two other files of its package and language to open first (the user's other open
documents), trimmed to ``others_max_chars`` at a line boundary (:func:`other_text`).

Output: ``bench/data/heldout/{SPLIT}.json.xz``:
``{"seed", "split", "others_max_chars", "packages": [{name, version, license, lang, split, source, sha256}],
"files": {id: {package, path, lang (LSP languageId), text}}, "cases": [{id, file, offset, kind, expected,
others}]}``.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import html
import io
import json
import lzma
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import ROOT, display_path

SEED = 16
CACHE = ROOT / "data" / "heldout-src"
OUT = Path(__file__).resolve().parent / "data" / "heldout"
MANIFESTS = (ROOT / "dgcomplete" / "train" / "corpus_manifest.json",  # tier 2: the shipped model's
             ROOT / "dgcomplete" / "train" / "corpus_manifest_large.json")  # tier 3: the next training run's
RESERVED = ("tomlkit", "jsonschema", "python-dateutil", "dateutil", "luxon", "immer")
CASES_PER_PACKAGE = 75  # 8 dev packages -> ~600 cases, 4 test packages -> ~300
MIN_FILE, MAX_FILE = 1_000, 60_000  # bytes
OTHERS_MAX_CHARS = 30_000
MAX_OTHERS = 2
MID_IDENT_SHARE = 0.3
MAX_LINE = 160  # longer lines are data tables or minified code, not typing
EXCLUDE = (r"(^|/)(tests?|__tests__|testing|docs?|examples?|vendor(ed)?|dist|build|bench)(/|$)"
           r"|\.d\.ts$|\.min\.js$|(^|/)(setup|conftest|_version)\.py$")
EXCLUDE_GO = EXCLUDE + r"|_test\.go$|(^|/)fuzz\.go$"
_GEM_LIB = r"^usr/share/rubygems-integration/all/gems/[^/]+/lib/.*\.rb$"
_PHP_LIB = r"^usr/share/php/.*\.php$"
_EXCLUDE_CC = EXCLUDE + r"|(_test|_unittest|_benchmark|_fuzzer|test|_striptest\d*|_striptest_main)\.cc$|(^|/)(contrib|windows|fuzzing)/"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    license: str
    registry: str  # pypi | npm | debian (a binary .deb) | debian-src (the upstream tarball of a source package)
    split: str  # one of SPLITS
    archive: str
    sha256: str
    include: str  # regex on the path inside the archive (first component removed)
    exclude: str = EXCLUDE
    cases: int = 0  # cases drawn from this package; 0: the builder's per-package number

    @property
    def source(self) -> str:
        return f"{self.registry}:{self.name}=={self.version}"


PACKAGES: tuple[Package, ...] = (
    Package("humanize", "4.11.0", "MIT", "pypi", "dev", "humanize-4.11.0.tar.gz",
            "e66f36020a2d5a974c504bd2555cf770621dbdbb6d82f94a6857c0b1ea2608be", r"^src/humanize/.*\.py$"),
    Package("tenacity", "9.0.0", "Apache-2.0", "pypi", "dev", "tenacity-9.0.0.tar.gz",
            "807f37ca97d62aa361264d497b0e31e92b8027044942bfa756160d908320d73b", r"^tenacity/.*\.py$"),
    Package("cachetools", "5.5.0", "MIT", "pypi", "test", "cachetools-5.5.0.tar.gz",
            "2cc24fb4cbe39633fb7badd9db9ca6295d766d9c2995f245725a46715d050f2a", r"^src/cachetools/.*\.py$"),
    Package("cattrs", "24.1.2", "MIT", "pypi", "test", "cattrs-24.1.2.tar.gz",
            "8028cfe1ff5382df59dd36474a86e02d817b06eaf8af84555441bac915d2ef85", r"^src/cattrs/.*\.py$"),
    Package("js-yaml", "4.1.0", "MIT", "npm", "dev", "js-yaml-4.1.0.tgz",
            "0dae332559cf22b21c26ea70e732afd8303ff99412f9c3d9d209faa8882cf2ca", r"^lib/.*\.js$"),
    Package("cac", "6.7.14", "MIT", "npm", "dev", "cac-6.7.14.tgz",
            "d6dba561aa03eb1ee42e174eebdf1692d74e7af289b9b381400226813b4952be", r"^deno/.*\.ts$"),
    Package("qs", "6.13.0", "BSD-3-Clause", "npm", "test", "qs-6.13.0.tgz",
            "abffeabbdedc8e466c1bd75227e14ceb76e77f61be475dfcee0d3bbe6dd608fd", r"^lib/.*\.js$"),
    Package("@tanstack/query-core", "5.59.0", "MIT", "npm", "test", "tanstack-query-core-5.59.0.tgz",
            "2586579316ffc0957be3c4c33e2f9dfa7732b55c15013b7139244d2ab60d27fc", r"^src/.*\.tsx?$"),
    # Added later, appended so that a split's random stream draws the earlier packages' cases as before:
    Package("wrapt", "1.16.0", "BSD-2-Clause", "pypi", "dev", "wrapt-1.16.0.tar.gz",
            "5f370f952971e7d17c7d1ead40e49f32345a7f7a5373571ef44d800d06b1899d", r"^src/wrapt/.*\.py$"),
    Package("sortedcontainers", "2.4.0", "Apache-2.0", "pypi", "dev", "sortedcontainers-2.4.0.tar.gz",
            "25caa5a06cc30b6b83d11423433f65d1f9d76c4c6a0c90e3379eaa43b9bfdb88", r"^sortedcontainers/.*\.py$"),
    Package("postcss", "8.4.47", "MIT", "npm", "dev", "postcss-8.4.47.tgz",
            "44a914dfbc884f6fc10fbc56653a989f0c601b2a2fcf0713fae1b6fd62ee2a60", r"^lib/.*\.js$"),
    Package("prosemirror-model", "1.23.0", "MIT", "npm", "dev", "prosemirror-model-1.23.0.tgz",
            "fbf2f7bcab14121b3e4e15e880f961a159f34f838ca10296df60c5c216c639f5", r"^src/.*\.ts$"),
    # Go, Rust, C and Java (splits dev_langs / test_langs): Debian bookworm, the -dev binary package for Go and
    # Rust (sources under /usr/share/gocode, /usr/share/cargo), the upstream tarball of the source package for
    # C and Java; none of them is in either corpus manifest (tiers 2 and 3).  Small packages come in pairs of 38
    # cases so that each language has about 75 per split.
    Package("golang-github-masterminds-semver-dev", "3.2.0-1", "MIT", "debian", "dev_langs",
            "golang-github-masterminds-semver-dev_3.2.0-1_all.deb",
            "30b5c31ce1c471d968c662e4491afbdd73820fbb3d1e8c0b0afef852a54f25b7", r"^usr/share/gocode/src/.*\.go$",
            EXCLUDE_GO, 38),
    Package("golang-github-huandu-xstrings-dev", "1.3.3-1", "MIT", "debian", "dev_langs",
            "golang-github-huandu-xstrings-dev_1.3.3-1_all.deb",
            "48a86578e3af2239bd8a8454ebb1947768fc492340f21b64f0a4ff4d837c2946", r"^usr/share/gocode/src/.*\.go$",
            EXCLUDE_GO, 38),
    Package("golang-github-robfig-cron-dev", "3.0.1-1", "MIT", "debian", "test_langs",
            "golang-github-robfig-cron-dev_3.0.1-1_all.deb",
            "f9e33f1a2ef550ad53680aed5d4c728b88424a074dd6a480acb130996adee424", r"^usr/share/gocode/src/.*\.go$",
            EXCLUDE_GO, 38),
    Package("golang-github-shopspring-decimal-dev", "1.2.0-2", "MIT", "debian", "test_langs",
            "golang-github-shopspring-decimal-dev_1.2.0-2_all.deb",
            "ad6a6585f5e54a83e911c782b3bd6955e1e2ef1666fb3f82d2a5364e2787018b", r"^usr/share/gocode/src/.*\.go$",
            EXCLUDE_GO + r"|/decimal-go\.go$", 38),  # a copy of Go's strconv/decimal.go, which the corpus has
    Package("librust-xxhash-rust-dev", "0.8.5-3", "BSL-1.0", "debian", "dev_langs",
            "librust-xxhash-rust-dev_0.8.5-3_amd64.deb",
            "5f288a84da3b30dca7a1f4f26b78505a66ecfb95162a2e9902e45693d727956a", r"^usr/share/cargo/registry/[^/]+/src/.*\.rs$",
            cases=38),
    Package("librust-better-panic-dev", "0.3.0-1+b1", "MIT", "debian", "dev_langs",
            "librust-better-panic-dev_0.3.0-1+b1_amd64.deb",
            "80e140181b9933b0bd90145180c5fb2bd2802626c67c2e86808a39bf8e4e0c8b", r"^usr/share/cargo/registry/[^/]+/src/.*\.rs$",
            cases=38),
    Package("librust-symbolic-demangle-dev", "9.2.1-1", "MIT", "debian", "test_langs",
            "librust-symbolic-demangle-dev_9.2.1-1_amd64.deb",
            "2e6a3e29ce5160bb3379ba45296c2cbe7dd41d3ca9b632d232b6eea91507d52d", r"^usr/share/cargo/registry/[^/]+/src/.*\.rs$",
            cases=38),
    Package("librust-hmac-dev", "0.12.1-1", "MIT OR Apache-2.0", "debian", "test_langs",
            "librust-hmac-dev_0.12.1-1_amd64.deb",
            "29574fb6ebb5b4f5555c12f93019c7b4c76b09594539091628f0e7911c4a97f0", r"^usr/share/cargo/registry/[^/]+/src/.*\.rs$",
            cases=38),
    Package("lilv", "0.24.14", "ISC", "debian-src", "dev_langs", "lilv_0.24.14.orig.tar.bz2",
            "6399dfcbead61a143acef3a38ad078047ab225b00470ad5d33745637341d6406", r"^src/.*\.[ch]$"),
    Package("libzip", "1.7.3", "BSD-3-Clause", "debian-src", "test_langs", "libzip_1.7.3.orig.tar.xz",
            "a60473ffdb7b4260c08bfa19c2ccea0438edac11193c3afbbb1f17fbcf6c6132", r"^lib/.*\.[ch]$"),
    Package("commons-exec", "1.3", "Apache-2.0", "debian-src", "dev_langs", "commons-exec_1.3.orig.tar.gz",
            "db0742fa59b7d69375e5d99e827aee0bf06ac527aa6def63618950e40c24cb9f", r"^src/main/java/.*\.java$",
            cases=38),
    Package("commons-csv", "1.9.0", "Apache-2.0", "debian-src", "dev_langs", "commons-csv_1.9.0.orig.tar.xz",
            "661252998cf2b9aac1aa12fe9e104dc23190761a8971384f83a6c1fc02536867", r"^src/main/java/.*\.java$",
            cases=38),
    Package("joda-time", "2.10.14", "Apache-2.0", "debian-src", "test_langs", "libjoda-time-java_2.10.14.orig.tar.xz",
            "600ab9a000b7c8ab4cb24e0fbd5c5ee6c4be46b97c55f90004df3cd1c56bd0b5", r"^src/main/java/.*\.java$"),
    # Ruby and PHP (splits dev_ruby_php / test_ruby_php): languages the shipped model was never trained on (no
    # corpus tier has them), for what the file and the syntax layer give there; Debian bookworm's binary packages
    # (the gems' lib/ under rubygems-integration, the PHP libraries under /usr/share/php).
    Package("ruby-thor", "1.2.1-2", "MIT", "debian", "dev_ruby_php", "ruby-thor_1.2.1-2_all.deb",
            "509715d16039ee7336531718e2497d0f81ae125b9ee53f321dd909c2f03fd2e1", _GEM_LIB),
    Package("ruby-mustermann", "3.0.0-2", "MIT", "debian", "dev_ruby_php", "ruby-mustermann_3.0.0-2_all.deb",
            "951ce99726f797e9d28e4f64175733e007930109d295e8070e46ecf6f862c892", _GEM_LIB),
    Package("php-monolog", "2.9.1-1", "MIT", "debian", "dev_ruby_php", "php-monolog_2.9.1-1_all.deb",
            "f8a26688b521e33cf6ef73b75ae5eac0cb026d986a336161456dd37dbb710681", _PHP_LIB),
    Package("php-composer-semver", "3.3.2-1", "MIT", "debian", "dev_ruby_php", "php-composer-semver_3.3.2-1_all.deb",
            "b9995a9a1f4a54d84413252ede10fbbdcd008723c446ba3ea6aed80c36469829", _PHP_LIB),
    Package("ruby-tzinfo", "2.0.5-1", "MIT", "debian", "test_ruby_php", "ruby-tzinfo_2.0.5-1_all.deb",
            "801949209ad6022c5805d67d2a6de0a7e0262e19497cd3adab79b524c76210f5", _GEM_LIB),
    Package("ruby-kramdown", "2.4.0-2", "MIT", "debian", "test_ruby_php", "ruby-kramdown_2.4.0-2_all.deb",
            "2508d1b422c5f3d49df0814cbf3097c3f63d9d6a1eef3709542caeb8883b9e89", _GEM_LIB),
    Package("php-league-commonmark", "2.3.9-1+deb12u1", "BSD-3-Clause", "debian", "test_ruby_php",
            "php-league-commonmark_2.3.9-1+deb12u1_all.deb",
            "c702ba9fbe6727f011f25eba2bdb89871b56f37d811092e51089816df8eecd81", _PHP_LIB),
    Package("php-guzzlehttp-psr7", "2.4.5-1+deb12u1", "MIT", "debian", "test_ruby_php",
            "php-guzzlehttp-psr7_2.4.5-1+deb12u1_all.deb",
            "62a536ac1e6f7fc47e6f36562e0049da3023b3adeac1be114c9fda2fbc08eb52", _PHP_LIB),
    # C++ (splits dev_cpp / test_cpp): a grammar language no corpus tier has (the corpus's C is .c/.h), so the
    # network saw only its C subset; the upstream tarballs of Debian bookworm source packages, .cc/.cpp files only
    # (a .h would be read as C).
    Package("leveldb", "1.23", "BSD-3-Clause", "debian-src", "dev_cpp", "leveldb_1.23.orig.tar.gz",
            "9a37f8a6174f09bd622bc723b55881dc541cd50747cbd08831c2a82d620f6d76", r"^(db|table|util|helpers)/.*\.cc$",
            _EXCLUDE_CC),
    Package("double-conversion", "3.2.1", "BSD-3-Clause", "debian-src", "dev_cpp",
            "double-conversion_3.2.1.orig.tar.gz", "e40d236343cad807e83d192265f139481c51fc83a1c49e406ac6ce0a0ba7cd35",
            r"^double-conversion/.*\.cc$", _EXCLUDE_CC, 38),
    Package("snappy", "1.1.9", "BSD-3-Clause", "debian-src", "dev_cpp", "snappy_1.1.9.orig.tar.gz",
            "75c1fbb3d618dd3a0483bff0e26d0a92b495bbe5059c8b4f1c962b478b6e06e7", r"^[^/]*\.cc$", _EXCLUDE_CC, 38),
    Package("re2", "20220601", "BSD-3-Clause", "debian-src", "test_cpp", "re2_20220601+dfsg.orig.tar.xz",
            "3bc61251da3b0b97be40a8a127818c517c62516e4eda11fc901d29496663df54", r"^(re2|util)/.*\.cc$", _EXCLUDE_CC),
    Package("yaml-cpp", "0.7.0", "MIT", "debian-src", "test_cpp", "yaml-cpp_0.7.0+dfsg.orig.tar.xz",
            "dc63708605404e0b963e0ca3a9619d1c8270eda2839603e6fa0384e5e51e5312", r"^src/.*\.cpp$", _EXCLUDE_CC),
)
SPLITS = ("dev", "test", "dev_langs", "test_langs", "dev_ruby_php", "test_ruby_php", "dev_cpp", "test_cpp")

LANGUAGE_IDS = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
                ".jsx": "javascriptreact", ".ts": "typescript", ".tsx": "typescriptreact",
                ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".rb": "ruby", ".php": "php",
                ".cc": "cpp", ".cpp": "cpp"}
_TOKEN = re.compile(r"\w+|\s+|===|!==|\*\*=?|//=?|\.\.\.|>>>?=?|<<=?|&&=?|\|\|=?|\?\?=?|[=!<>+\-*/%&|^:]=|=>|->|[^\w\s]")
_GENERATED = re.compile(r"generated by|do not edit|auto-?generated", re.I)


def language_id(path: str) -> str | None:
    """The LSP languageId an editor sends for this file name."""
    return LANGUAGE_IDS.get(Path(path).suffix.lower())


def family(lang_id: str) -> str:
    """``python``, ``js`` (JavaScript and TypeScript are one family for the split and the report), or the
    languageId itself (``go``, ``rust``, ``java``, ``c``, ``cpp``, ``ruby``, ``php``)."""
    lang_id = real_language(lang_id)
    if lang_id.startswith(("javascript", "typescript")):
        return "js"
    return lang_id


# ---- the derived texts the harness uses ---------------------------------------------------------------------
def case_document(files: dict[str, dict[str, Any]], case: dict[str, Any]) -> tuple[str, int]:
    """(document text, cursor offset) of a case: the file up to the cursor, the rest of that line dropped (but for the
    closers an auto-closing editor put there, :func:`with_autoclose`)."""
    text = files[case["file"]]["text"]
    off = case["offset"]
    eol = text.find("\n", off)
    eol = len(text) if eol < 0 else eol - (eol > off and text[eol - 1] == "\r")  # a CRLF file keeps its "\r"
    return text[:off] + case.get("right", "") + text[eol:], off


def other_text(files: dict[str, dict[str, Any]], fid: str, max_chars: int = OTHERS_MAX_CHARS) -> str:
    """An other open document: the file, trimmed to ``max_chars`` at a line boundary."""
    text = files[fid]["text"]
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[: cut + 1 if cut > 0 else max_chars]


def load(split: str, root: Path = OUT) -> dict[str, Any]:
    """A built split (one of :data:`SPLITS`)."""
    path = root / f"{split}.json.xz"
    if not path.exists():
        sys.exit(f"bench: no held-out set at {display_path(path)} (run python -m bench.heldout)")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


AS_TEXT_ID, AS_TEXT_SUFFIX = "x-", ".txt"  # what as_text puts before a languageId and after a file name


def as_text(data: dict[str, Any]) -> dict[str, Any]:
    """The split as an editor sends a language without a grammar: each file's languageId becomes ``x-<id>`` and its
    name gains ``.txt`` (so neither maps to a grammar), the texts and cases unchanged. What the daemon gives
    documents of such a language, measured on files whose language is known (``--as-text``)."""
    fid = lambda f: f + AS_TEXT_SUFFIX  # noqa: E731
    files = {fid(k): {**v, "lang": AS_TEXT_ID + v["lang"], "path": fid(v["path"])} for k, v in data["files"].items()}
    cases = [{**c, "file": fid(c["file"]), "others": [fid(o) for o in c["others"]]} for c in data["cases"]]
    return {**data, "files": files, "cases": cases, "as_text": True}


def with_crlf(data: dict[str, Any]) -> dict[str, Any]:
    """The split as an editor on Windows often sends it: every file's lines broken with "\\r\\n" (the cases' cursors
    moved with them, their expected lines unchanged). What the daemon gives such files (``--crlf``)."""
    from dgcomplete.edit import crlf_lines

    files = {k: {**v, "text": crlf_lines(v["text"])} for k, v in data["files"].items()}
    cases = [{**c, "offset": c["offset"] + data["files"][c["file"]]["text"].count("\n", 0, c["offset"])}
             for c in data["cases"]]
    return {**data, "files": files, "cases": cases, "crlf": True}


def tab_unit(text: str) -> int:
    """The width of one indent level in a file indented with spaces: the commonest step up between two lines
    (2, 4 or 8; 4 where none shows)."""
    steps: dict[int, int] = {}
    prev = 0
    for line in text.split("\n"):
        if not line.strip():
            continue
        n = len(line) - len(line.lstrip(" "))
        if n > prev and n - prev in (2, 4, 8):
            steps[n - prev] = steps.get(n - prev, 0) + 1
        prev = n
    return max(steps, key=lambda k: (steps[k], k)) if steps else 4


def tab_lines(text: str, unit: int) -> str:
    """``text`` indented with tabs: each line's leading spaces become one tab per ``unit``, the rest stay spaces
    (what an editor set to indent with tabs writes; a JSDoc ``*`` keeps its space)."""
    from dgcomplete.syntax.document import tab_indent

    def one(line: str) -> str:  # the leading spaces only: a line that starts with a tab stays as it is
        n = len(line) - len(line.lstrip(" "))
        return tab_indent(line[:n], unit) + line[n:]
    return "\n".join(one(line) for line in text.split("\n"))


def with_tabs(data: dict[str, Any]) -> dict[str, Any]:
    """The split as a project indented with tabs sends it (Eclipse's Java default, WordPress' PHP, many JS and C
    projects): every file indented with spaces re-indented with tabs, the cases' cursors moved with their lines,
    their expected lines unchanged. Files already indented with tabs (Go) stay as they are (``--tabs``)."""
    files, units = {}, {}
    for k, v in data["files"].items():
        lines = v["text"].split("\n")
        if sum(ln.startswith("\t") for ln in lines) >= sum(ln.startswith("  ") for ln in lines):
            files[k] = v
            continue
        units[k] = tab_unit(v["text"])
        files[k] = {**v, "text": tab_lines(v["text"], units[k])}
    cases = []
    for c in data["cases"]:
        off = c["offset"]
        if c["file"] in units:
            text = data["files"][c["file"]]["text"]
            ls = text.rfind("\n", 0, off) + 1
            lead = len(text[ls:off]) - len(text[ls:off].lstrip(" "))
            head = tab_lines(text[:ls] + text[ls : ls + lead], units[c["file"]])
            off = len(head) + (off - ls - lead)
        cases.append({**c, "offset": off})
    return {**data, "files": files, "cases": cases, "tabs": True}


VUE_HEAD = '<template>\n  <div class="panel">\n    <h2>{{ title }}</h2>\n  </div>\n</template>\n\n<script{attrs}>\n'
VUE_TAIL = "\n</script>\n\n<style scoped>\n.panel {\n  padding: 8px;\n}\n</style>\n"


# VS Code's defaults (editor.autoClosingBrackets / autoClosingQuotes "languageDefined", autoClosingOvertype "auto";
# nvim-autopairs does much the same): an opener typed before one of these, or at the end of the line, gets its
# closer; a quote too, unless it follows a word character or the cursor is in a string or a comment; a closer or
# quote typed where the editor put that same character is typed over.
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = frozenset(OPENERS.values())
AUTO_CLOSE_BEFORE = frozenset(";:.,=}])> \t\n")
QUOTES = "\"'`"


def _in_string_or_comment(line: str) -> bool:
    """Whether the end of ``line`` (a line's text left of the cursor) is inside a string or a line comment."""
    quote, i = "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in QUOTES:
            quote = ch
        elif ch == "#" or line.startswith("//", i):
            return True
        i += 1
    return bool(quote)


def auto_closed(text: str, cursor: int, c: str) -> tuple[int, int, str, int]:
    """The edit (start, end, text) and the cursor after it when ``c`` is typed at ``cursor`` in an editor that
    auto-closes. Everything right of the cursor on the typed line is what the editor closed (a whole-line case
    starts with nothing there), so a character equal to the next one is typed over (start == end, text "")."""
    ls = text.rfind("\n", 0, cursor) + 1
    nxt = text[cursor] if cursor < len(text) else "\n"
    left = text[ls:cursor]
    if nxt != "\n" and c == nxt and (c in CLOSERS or c in QUOTES):
        return cursor, cursor, "", cursor + 1
    before_ok = nxt in AUTO_CLOSE_BEFORE
    if c in OPENERS and before_ok:
        return cursor, cursor, c + OPENERS[c], cursor + 1
    if (c in QUOTES and before_ok and not (left[-1:].isalnum() or left[-1:] == "_")
            and not _in_string_or_comment(left)):
        return cursor, cursor, c + c, cursor + 1
    return cursor, cursor, c, cursor + 1


def editor_right(typed: str) -> str:
    """What an auto-closing editor leaves right of the cursor once ``typed`` (a line's start) is typed into an
    empty line: the closers it put there and the typist has not typed over yet."""
    text, cursor = "", 0
    for c in typed:
        start, end, s, cursor = auto_closed(text, cursor, c)
        text = text[:start] + s + text[end:]
    return text[cursor:]


def with_autoclose(data: dict[str, Any]) -> dict[str, Any]:
    """The split as an editor that auto-closes brackets and quotes sends it (VS Code's default, Neovim with an
    autopairs plugin): right of a mid-line case's cursor, the closers its typed part left there (``right``, which
    :func:`case_document` puts in; ``--autoclose``). A whole-line case has nothing typed, so nothing there."""
    cases = []
    for c in data["cases"]:
        text = data["files"][c["file"]]["text"]
        right = editor_right(text[text.rfind("\n", 0, c["offset"]) + 1 : c["offset"]].lstrip(" \t"))
        cases.append({**c, "right": right} if right else c)
    return {**data, "cases": cases, "autoclose": True}


def with_vue(data: dict[str, Any]) -> dict[str, Any]:
    """The split's JavaScript and TypeScript cases as a Vue project sends them: each case's file the ``<script>``
    (``lang="ts"`` for TypeScript) of a single-file component, between a template and a style, sent as ``vue``
    (``name.vue``); the other open files as they are, the expected lines unchanged; the other languages' cases
    left out (``--vue``). What the daemon gives the script of a ``.vue`` file (or a Svelte one, or an HTML page's)."""
    files = dict(data["files"])
    cases = []
    for c in data["cases"]:
        f = data["files"][c["file"]]
        if family(f["lang"]) != "js":
            continue
        head = VUE_HEAD.replace("{attrs}", ' lang="ts"' if f["lang"].startswith("typescript") else "")
        fid = c["file"] + ".vue"
        files[fid] = {**f, "lang": "vue", "path": f["path"] + ".vue", "text": head + f["text"] + VUE_TAIL}
        cases.append({**c, "file": fid, "offset": c["offset"] + len(head)})
    return {**data, "files": files, "cases": cases, "vue": True}


def with_markdown(data: dict[str, Any]) -> dict[str, Any]:
    """The split's cases as a Markdown file shows code: each case's file a fenced block (```` ```python ````,
    ```` ```typescript ````) between a heading and a line of prose, sent as ``markdown`` (``name.md``); the other
    open files as they are, the expected lines unchanged (``--markdown``). A whole file in one fence is longer than
    most fenced snippets: this measures the reading, not a typical README."""
    files = dict(data["files"])
    cases = []
    for c in data["cases"]:
        f = data["files"][c["file"]]
        head = f"# {f['path'].rsplit('/', 1)[-1]}\n\nThe module as it stands:\n\n```{f['lang']}\n"
        tail = ("" if f["text"].endswith("\n") else "\n") + "```\n\nNotes follow.\n"
        fid = c["file"] + ".md"
        files[fid] = {**f, "lang": "markdown", "path": f["path"] + ".md", "text": head + f["text"] + tail}
        cases.append({**c, "file": fid, "offset": c["offset"] + len(head)})
    return {**data, "files": files, "cases": cases, "markdown": True}


def edit_gap(text: str, lang_id: str, off: int, pick: random.Random) -> int | None:
    """Where a piece of the line taken out at ``off`` ends (:func:`with_edits`): the end of one named syntax node
    that starts at ``off`` (an expression, an argument, a name; or, mid-word, of the word ``off`` is in), chosen by
    ``pick`` among those that end on the line with a word left right of them (not only closers and punctuation).
    None: no such node."""
    from dgcomplete.syntax.document import TextIndex, parse
    from dgcomplete.syntax.languages import language_for

    tree = parse(text, language_for(real_language(lang_id)))
    if tree is None:
        return None
    index = TextIndex(text)
    eol = text.find("\n", off)
    eol = len(text) if eol < 0 else eol
    b, b_eol = index.byte_offset(off), index.byte_offset(eol)
    b_line = index.byte_offset(text.rfind("\n", 0, off) + 1)
    ends: set[int] = set()
    node = tree.root_node.descendant_for_byte_range(b, b)
    while node is not None and node.start_byte >= b_line:  # the nodes around the cursor that start on its line
        piece = node.text.decode("utf-8", "replace")
        # an expression, an argument, a name, a keyword (not a lone `=`, `,` or quote); mid-word, the word's rest
        whole = node.start_byte == b and (node.is_named or piece.isidentifier()) and re.search(r"\w", piece)
        word = node.start_byte < b and node.child_count == 0 and re.fullmatch(r"\w+", piece)
        if b < node.end_byte <= b_eol and (whole or word):
            ends.add(node.end_byte)
        node = node.parent
    ok = sorted(e for e in ends if re.search(r"\w", text[index.char_offset(e) : eol]))
    return index.char_offset(pick.choice(ok)) if ok else None


def with_edits(data: dict[str, Any]) -> dict[str, Any]:
    """The split's mid-line cases as edits inside a written line (``--edits``): a piece of the line taken out at the
    cursor (:func:`edit_gap`), the rest of the line left right of it (``right``), so the suggestion must fit between;
    ``expected`` is the line right of the cursor as it was, the piece and what follows it. Whole-line cases and
    those with no such piece are left out."""
    cases = []
    for c in data["cases"]:
        if c["kind"] != "mid_line":
            continue
        f = data["files"][c["file"]]
        end = edit_gap(f["text"], f["lang"], c["offset"], random.Random(c["id"]))
        if end is None:
            continue
        eol = f["text"].find("\n", end)
        right = f["text"][end : len(f["text"]) if eol < 0 else eol].rstrip("\r")
        piece = f["text"][c["offset"] : end]
        cases.append({**c, "kind": "edit", "right": right, "piece": piece, "expected": piece + right.rstrip()})
    return {**data, "cases": cases, "edits": True}


# the ways a bench can send a split's files, as editors send real ones: (flag, the split so sent, its help), in the
# order they apply
SENDINGS = (
    ("as_text", as_text, "send the files as a language without a grammar (bench.heldout.as_text)"),
    ("crlf", with_crlf, "every file with CRLF line breaks, as an editor on Windows often sends them"),
    ("tabs", with_tabs, "every file indented with spaces re-indented with tabs, as a tab-indented project sends it"),
    ("vue", with_vue, "the JavaScript and TypeScript cases each the script of a Vue single-file component"),
    ("markdown", with_markdown, "each case's file a fenced code block of a Markdown file"),
    ("autoclose", with_autoclose, "as an editor that auto-closes brackets and quotes sends them: the closers typed "
     "lines leave right of the cursor (VS Code's defaults)"),
    ("edits", with_edits, "the mid-line cases as edits inside a written line: a piece taken out at the cursor, the "
     "rest of the line right of it"),
)


def add_sending_args(ap: Any) -> None:
    """The flags of :data:`SENDINGS` (:func:`as_sent`)."""
    for flag, _, help_ in SENDINGS:
        ap.add_argument("--" + flag.replace("_", "-"), action="store_true", help=help_)


def as_sent(data: dict[str, Any], a: Any) -> dict[str, Any]:
    """The split as :func:`add_sending_args`' flags ``a`` send it."""
    for flag, how, _ in SENDINGS:
        data = how(data) if getattr(a, flag) else data
    return data


def sending(a: Any) -> dict[str, Any]:
    """How the files were sent, for a report's settings."""
    return {"line_breaks": "crlf" if a.crlf else "lf", "indent": "tabs" if a.tabs else "as written",
            "embedded": "the script of a Vue component" if a.vue else
            "a fenced block of a Markdown file" if a.markdown else None,
            **({"closers": "auto-closed by the editor"} if getattr(a, "autoclose", False) else {}),
            **({"cases": "edits inside a written line"} if getattr(a, "edits", False) else {})}


def real_language(lang_id: str) -> str:
    """The languageId a file of the split has, also where :func:`as_text` sends it as another."""
    return lang_id.removeprefix(AS_TEXT_ID)


# ---- fetching -------------------------------------------------------------------------------------------------
def check_clean(packages: tuple[Package, ...] = PACKAGES) -> None:
    """Refuse packages that are in a training corpus (tier 2 or 3) or reserved for the external check."""
    names = {s.get("name", "").lower() for m in MANIFESTS if m.exists() for s in json.loads(m.read_text())["sources"]}
    for p in packages:
        n = p.name.lower()
        if n in names or n.split("/")[-1] in names:
            raise SystemExit(f"bench.heldout: {p.name} is in the corpus manifest")
        if any(r in n for r in RESERVED):
            raise SystemExit(f"bench.heldout: {p.name} is reserved for the external check")


PYPI_SIMPLE = "https://pypi.org/simple"


def _pypi_archive(p: Package, cache: Path) -> None:
    """The pinned source archive, as PyPI's simple index links it. Not ``pip download``: that builds the sdist's
    metadata, so it installs the build backend and its build dependencies from source (geoviews 1.16.0 needs
    narwhals, whose backend needs maturin, which needs crates.io), and it refuses a release that asks for a newer
    Python than the bench's own; only the files are read here, and the archive is checked by its sha256."""
    index = urllib.request.urlopen(f"{PYPI_SIMPLE}/{p.name}/", timeout=60).read().decode()
    link = re.search(rf'href="([^"#]*/{re.escape(p.archive)})(#[^"]*)?"', index)
    if link is None:
        raise SystemExit(f"bench.heldout: {p.archive} is not on {PYPI_SIMPLE}/{p.name}/")
    (cache / p.archive).write_bytes(urllib.request.urlopen(html.unescape(link.group(1)), timeout=300).read())


def fetch(p: Package, cache: Path = CACHE) -> bytes:
    """The package archive (PyPI's simple index / npm pack / apt-get into the cache), checked against its pinned
    sha256.

    A source package is fetched with ``apt-get source --download-only`` against a private bookworm ``deb-src``
    index in the cache (:func:`dgcomplete.train.corpus.apt_source_options`); only its upstream tarball is used,
    so a missing Debian tarball does not matter."""
    path = cache / p.archive
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        if p.registry == "pypi":
            _pypi_archive(p, cache)
        else:
            check = True
            if p.registry == "npm":
                cmd = ["npm", "pack", f"{p.name}@{p.version}", "--silent", "--pack-destination", str(cache)]
            elif p.registry == "debian":
                cmd = ["apt-get", "download", "-q", f"{p.name}={p.version}"]
            else:
                from dgcomplete.train.corpus import apt_source_options

                cmd, check = ["apt-get", *apt_source_options(cache), "source", "--download-only", "-q",
                              p.archive.split("_", 1)[0]], False
            subprocess.run(cmd, check=check, timeout=300, cwd=cache, stdout=subprocess.DEVNULL)
        if not path.exists():
            raise SystemExit(f"bench.heldout: {p.source}: {p.archive} could not be fetched")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != p.sha256:
        raise SystemExit(f"bench.heldout: {p.archive}: sha256 {digest} != pinned {p.sha256}")
    return data


def as_tar(p: Package, data: bytes) -> bytes:
    """The archive as a tar: a ``.deb``'s file system tree (paths ./usr/...; dpkg-deb wants a file), else as is."""
    if not p.archive.endswith(".deb"):
        return data
    with tempfile.NamedTemporaryFile(suffix=".deb") as deb:
        deb.write(data)
        deb.flush()
        return subprocess.run(["dpkg-deb", "--fsys-tarfile", deb.name], check=True, capture_output=True).stdout


def member_path(p: Package, name: str) -> str:
    """A tar member's path as cases name it: a ``.deb``'s from its root, a tarball's without its top folder."""
    name = name[2:] if name.startswith("./") else name
    return name.split("/", 1)[1] if "/" in name and not p.archive.endswith(".deb") else name


def source_files(p: Package, data: bytes) -> list[tuple[str, str]]:
    """(path, text) of the package's own source files: 1-60 KB, UTF-8, not tests/vendored/minified/generated."""
    out = []
    with tarfile.open(fileobj=io.BytesIO(as_tar(p, data)), mode="r:*") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if not m.isfile():
                continue
            path = member_path(p, m.name)
            if not re.search(p.include, path) or re.search(p.exclude, path) or language_id(path) is None:
                continue
            if any(r in path.lower() for r in RESERVED) or not MIN_FILE <= m.size <= MAX_FILE:
                continue
            f = tar.extractfile(m)
            try:
                text = f.read().decode("utf-8") if f else ""
            except UnicodeDecodeError:
                continue
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            if _GENERATED.search(text[:600]) or max(map(len, lines)) > 1000:  # generated or minified
                continue
            out.append((path, text))
    return out


# ---- picking lines --------------------------------------------------------------------------------------------
def _skip_ranges(text: str, lang_id: str) -> list[tuple[int, int, bool]] | None:
    """(start, end, starts_too) byte ranges a code line may not start in; None when the file has errors.

    Comments, and strings that are docstrings or span lines, may not hold a line's start (``starts_too``);
    other strings only may not contain it (a dict line may start with its key).
    """
    from dgcomplete.syntax.check import error_count
    from dgcomplete.syntax.document import parse
    from dgcomplete.syntax.languages import language_for

    tree = parse(text, language_for(lang_id))
    if tree is None or error_count(tree) > 0:
        return None
    out: list[tuple[int, int, bool]] = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type in ("comment", "line_comment", "block_comment"):
            out.append((n.start_byte, n.end_byte, True))
        elif n.type in ("heredoc_body", "heredoc", "nowdoc"):  # Ruby's and PHP's: text lines
            out.append((n.start_byte, n.end_byte, True))
        elif n.type in ("string", "template_string", "concatenated_string", "string_literal", "raw_string_literal",
                        "interpreted_string_literal", "text_block", "encapsed_string", "string_array"):
            whole = n.parent is not None and n.parent.type == "expression_statement"
            out.append((n.start_byte, n.end_byte, whole or n.start_point[0] != n.end_point[0]))
        else:
            stack.extend(n.children)
    return sorted(out)


def code_lines(text: str, lang_id: str) -> list[tuple[int, int, int]] | None:
    """(line start, content start, line end) char offsets of lines a user types as code; None: file has errors.

    A line qualifies when its content (after indentation) has >= 4 non-space characters, is at most
    ``MAX_LINE`` long, and does not start inside a comment, a docstring or a multi-line string.
    """
    ranges = _skip_ranges(text, lang_id)
    if ranges is None:
        return None
    starts = [a for a, _, _ in ranges]
    comment = ("#",) if lang_id in ("python", "ruby") else ("//", "/*")
    out = []
    pos = bpos = 0
    for line in text.split("\n"):
        content = line.lstrip(" \t")
        ind = len(line) - len(content)
        body = content.rstrip()
        if len(re.sub(r"\s", "", body)) >= 4 and len(line) <= MAX_LINE and not body.startswith(comment):
            b = bpos + len(line[:ind].encode("utf-8"))
            i = bisect.bisect_right(starts, b) - 1
            if not (i >= 0 and ranges[i][0] <= b < ranges[i][1] and (ranges[i][0] < b or ranges[i][2])):
                out.append((pos, pos + ind, pos + len(line)))
        pos += len(line) + 1
        bpos += len(line.encode("utf-8")) + 1
    return out


def cut_points(body: str) -> tuple[list[int], list[int]]:
    """(token-boundary cuts, mid-identifier cuts) inside a line's content: >= 2 chars typed, >= 2 left."""
    bounds, mids = [], []
    for m in _TOKEN.finditer(body):
        a, b = m.span()
        if not m.group().isspace() and a >= 2 and len(body[a:].strip()) >= 2:
            bounds.append(a)
        if m.group()[0].isalnum() or m.group()[0] == "_":
            mids += [c for c in range(a + 1, b) if c >= 2 and len(body[c:].strip()) >= 2]
    return bounds, mids


def build_split(split: str, seed: int = SEED, per_package: int = CASES_PER_PACKAGE,
                packages: tuple[Package, ...] = PACKAGES, sources: dict[str, list[tuple[str, str]]] | None = None,
                ) -> dict[str, Any]:
    """One split's files and cases, deterministic for a seed.  ``sources`` (package name -> files) skips fetching."""
    rng = random.Random(f"{seed}:{split}")
    files: dict[str, dict[str, Any]] = {}
    cases: list[dict[str, Any]] = []
    pkgs = []
    for p in (p for p in packages if p.split == split):
        srcs = sources[p.name] if sources is not None else source_files(p, fetch(p))
        lines: list[tuple[str, int, int, int]] = []
        langs = set()
        for path, text in srcs:
            lid = language_id(path)
            assert lid is not None
            cl = code_lines(text, lid)
            if cl is None:
                print(f"bench.heldout: {p.name}/{path}: skipped (tree-sitter errors)", file=sys.stderr)
                continue
            fid = f"{p.name}/{path}"
            files[fid] = {"package": p.name, "path": path, "lang": lid, "text": text}
            langs.add(family(lid))
            lines += [(fid, *x) for x in cl]
        pkgs.append({"name": p.name, "version": p.version, "license": p.license, "split": p.split,
                     "lang": "/".join(sorted(langs)), "source": p.source, "sha256": p.sha256,
                     "files": sum(f["package"] == p.name for f in files.values())})
        rng.shuffle(lines)
        made, quota = 0, p.cases or per_package
        for fid, _ls, cs, le in lines:
            if made >= quota:
                break
            text = files[fid]["text"]
            kind = "whole_line" if made % 2 == 0 else "mid_line"
            body = text[cs:le].rstrip()
            if kind == "whole_line":
                off = cs
            else:
                bounds, mids = cut_points(body)
                pool = mids if mids and (rng.random() < MID_IDENT_SHARE or not bounds) else bounds
                if not pool:
                    continue
                off = cs + rng.choice(pool)
            peers = sorted(f for f, v in files.items() if v["package"] == p.name and f != fid
                           and family(v["lang"]) == family(files[fid]["lang"]))
            others = rng.sample(peers, min(MAX_OTHERS, len(peers)))
            cases.append({"id": f"{split}-{len(cases):04d}", "file": fid, "offset": off, "kind": kind,
                          "expected": text[off:le].rstrip(), "others": others})
            made += 1
    used = {c["file"] for c in cases} | {o for c in cases for o in c["others"]}
    files = {k: v for k, v in files.items() if k in used}
    return {"seed": seed, "split": split, "others_max_chars": OTHERS_MAX_CHARS, "packages": pkgs,
            "files": files, "cases": cases}


def write(res: dict[str, Any], out: Path = OUT) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{res['split']}.json.xz"
    raw = json.dumps(res, indent=None, sort_keys=True, ensure_ascii=False).encode("utf-8")
    path.write_bytes(lzma.compress(raw, preset=9))
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(OUT), help="folder for {SPLIT}.json.xz")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--per-package", type=int, default=CASES_PER_PACKAGE)
    ap.add_argument("--splits", nargs="+", choices=SPLITS, default=list(SPLITS),
                    help="the splits to (re)build; each is drawn from its own random stream")
    a = ap.parse_args(argv)
    check_clean()
    summary = {}
    for split in a.splits:
        res = build_split(split, a.seed, a.per_package)
        path = write(res, Path(a.out))
        kinds: dict[str, int] = {}
        for c in res["cases"]:
            k = f"{family(res['files'][c['file']]['lang'])}/{c['kind']}"
            kinds[k] = kinds.get(k, 0) + 1
        summary[split] = {"path": display_path(path), "bytes": path.stat().st_size, "files": len(res["files"]),
                          "cases": len(res["cases"]), "by_lang_kind": dict(sorted(kinds.items())),
                          "packages": {p["name"]: p["files"] for p in res["packages"]}}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
