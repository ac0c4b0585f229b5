"""Language names, LSP languageId / file-extension mapping, and cached tree-sitter parsers.

Grammars come from the per-language wheels (tree-sitter-python, ...), imported lazily so a
missing wheel only disables its language instead of breaking the daemon.
"""

from __future__ import annotations

import ctypes
import importlib
import re
import sys
import threading
from collections.abc import Callable

import tree_sitter

SUPPORTED: tuple[str, ...] = (
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "lua",
    "bash",
    "json",
    "ruby",
    "php",
)

# language name -> (module, function returning the grammar pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "json": ("tree_sitter_json", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),  # PHP with the HTML around <?php ... ?> (language_php_only: none)
}

# LSP languageId -> language name (ids as listed in the LSP spec, plus common editor aliases)
_LANGUAGE_IDS: dict[str, str] = {
    "python": "python",
    "py": "python",
    "javascript": "javascript",
    "javascriptreact": "javascript",  # JSX is part of the javascript grammar
    "js": "javascript",
    "jsx": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "typescriptreact": "tsx",
    "tsx": "tsx",
    "go": "go",
    "golang": "go",
    "rust": "rust",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "c++": "cpp",
    "cuda-cpp": "cpp",
    "objective-cpp": "cpp",
    "lua": "lua",
    "shellscript": "bash",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "json": "json",
    "jsonc": "json",
    "json5": "json",
    "ruby": "ruby",
    "rb": "ruby",
    "php": "php",
}

# what opens a comment, by grammar name (the C family: JS/TS, Java, Go, Rust, C/C++); JSON has none
# (PHP's `#` comments are left out: `#[...]` is an attribute)
_COMMENT_OPENERS: dict[str, tuple[str, ...]] = {"python": ("#",), "bash": ("#",), "lua": ("--",), "json": (),
                                                "ruby": ("#",)}
_C_COMMENT_OPENERS = ("//", "/*")


def comment_openers(lang: str | None) -> tuple[str, ...]:
    """The tokens that open a comment in ``lang`` (the one table: retrieval and the soundness checks read it)."""
    return _COMMENT_OPENERS.get(lang or "", _C_COMMENT_OPENERS)


# besides what opens a comment (comment_openers), lines inside one start with these: a doctest
# prompt is docstring text, and a C-family block comment goes on with `*` lines
_PYTHON_MORE = (">>>",)
_C_MORE = ("*/", "* ", "*")


def comment_markers(lang: str | None) -> tuple[str, ...]:
    """How a comment line (or docstring example) starts in ``lang``."""
    openers = comment_openers(lang)
    return openers + (_PYTHON_MORE if lang == "python" else _C_MORE if openers[:1] == ("//",) else ())


def is_comment_line(line: str, lang: str | None) -> bool:
    """Whether ``line`` (stripped) is a comment: ``*`` alone or before a space, so that ``*p = 0;`` is code."""
    s = line.strip()
    return any(s == m or (s.startswith(m) and (m != "*" or s == "*")) for m in comment_markers(lang))


EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cu": "cpp",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".json": "json",
    ".jsonc": "json",
    ".json5": "json",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
    ".php": "php",
    ".phtml": "php",
}


def _name_and_extension(path: str) -> tuple[str, str]:
    """A path's or URI's last segment and its extension (lower case; "" for none and for a dot file)."""
    # Works for plain paths and file:// URIs alike: only the last segment matters.
    name = path.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    dot = name.rfind(".")
    return name, name[dot:].lower() if dot > 0 else ""


def _extension_language(path: str) -> str | None:
    name, ext = _name_and_extension(path)
    if name in (".bashrc", ".zshrc", ".profile", ".bash_profile"):
        return "bash"
    if name in ("Gemfile", "Rakefile", "Guardfile", "Vagrantfile"):
        return "ruby"
    return EXTENSIONS.get(ext)


# languages whose lines serve each other in retrieval: a TypeScript file is read for a JavaScript one, a C header
# (``.h`` maps to C) for C++
_KIN = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}


def kin(lang: str | None) -> str | None:
    """The family ``lang`` belongs to, for retrieval (what other documents and files it reads)."""
    return _KIN.get(lang or "", lang)


def language_for(language_id: str | None, path: str | None = None) -> str | None:
    """The tree-sitter language for an LSP languageId, falling back to the path's extension.

    The id wins because editors know better than the extension (e.g. a shebang script).
    """
    if language_id:
        lang = _LANGUAGE_IDS.get(language_id.strip().lower())
        if lang is not None:
            return lang
    if path:
        return _extension_language(path)
    return None


_TEXT = "text:"  # the keys of languages without a grammar


def text_language(language_id: str | None, path: str | None = None) -> str | None:
    """The key that groups the documents of a language without a grammar (``text:.kt``, ``text:kotlin``): the
    path's extension, so that the workspace folder's files of it are found by name, else the LSP languageId.
    Retrieval reads their lines as it does a known language's; no syntax check runs on them."""
    ext = _name_and_extension(path or "")[1]
    lid = (language_id or "").strip().lower()
    return _TEXT + ext if ext else _TEXT + lid if lid else None


def keyed_by_extension(lang: str) -> bool:
    """Whether ``lang`` is the key of a language without a grammar taken from a file extension, so that a folder's
    files of it are found by name (a languageId key names no files)."""
    return lang.startswith(_TEXT + ".")


def key_extension(lang: str) -> str | None:
    """The file extension of such a key (``.kt`` of ``text:.kt``), else None."""
    return lang[len(_TEXT) :] if keyed_by_extension(lang) else None


_languages: dict[str, tree_sitter.Language] = {}
_languages_lock = threading.Lock()
_local = threading.local()  # parsers are not thread-safe: one set per thread


def get_language(lang: str) -> tree_sitter.Language:
    """The grammar for `lang`, loaded once per process."""
    language = _languages.get(lang)
    if language is not None:
        return language
    if lang not in _GRAMMARS:
        raise KeyError(f"unsupported language: {lang!r}")
    module_name, fn_name = _GRAMMARS[lang]
    with _languages_lock:
        language = _languages.get(lang)
        if language is None:
            fn: Callable[[], object] = getattr(importlib.import_module(module_name), fn_name)
            language = tree_sitter.Language(fn())
            _languages[lang] = language
    return language


_spelled: dict[str, tuple[str, ...]] = {}
_OPERATOR = re.compile(r"[-+*/%<>=!&|^~?:]{1,3}")
_COMMENT_MARKS = ("//", "/*", "*/")


def _spelled_out(lang: str) -> tuple[str, ...]:
    """The tokens ``lang``'s grammar spells out: its visible unnamed nodes (keywords, operators, brackets)."""
    got = _spelled.get(lang)
    if got is None:
        language = get_language(lang)
        got = _spelled[lang] = tuple(sorted({
            n for i in range(language.node_kind_count)
            if not language.node_kind_is_named(i) and language.node_kind_is_visible(i)
            and (n := language.node_kind_for_id(i))}))
    return got


def keywords(lang: str | None) -> tuple[str, ...]:
    """The words ``lang``'s grammar spells out (``def``, ``in``, ``return``; of two letters or more): what a deleted
    keyword was, where the code around it does not say."""
    if not is_supported(lang):
        return ()
    assert lang is not None
    return tuple(n for n in _spelled_out(lang) if len(n) > 1 and n.isidentifier())


def operators(lang: str | None) -> tuple[str, ...]:
    """The operators ``lang``'s grammar spells out (``==``, ``:=``, ``=>``, ``&&``; three characters at most, no
    comment marks): what a deleted operator was."""
    if not is_supported(lang):
        return ()
    assert lang is not None
    return tuple(n for n in _spelled_out(lang) if _OPERATOR.fullmatch(n) and n not in _COMMENT_MARKS)


# a character of four UTF-8 bytes (past U+FFFF), as bash's parser must not read it
_ASTRAL = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")


class ParseGaveUp(RuntimeError):
    """A grammar went past its parse budget (:class:`_Parser`): the text has no tree, and asking again is no use
    until it changes."""

    def __init__(self, lang: str, size: int) -> None:
        super().__init__(f"tree-sitter's {lang} grammar gave up on this text ({size:,} bytes): no tree for it")
        self.lang = lang


# A parse's budget, in tree-sitter's progress checks (one per 100 parse operations): BUDGET_BASE, and BUDGET_PER_KB
# for each KiB of the text. The held-out files take 2 to 16 checks a KiB, and the costliest of bench.parse_budget's
# files and edited windows spent an eighth of its budget (bench/results/parse_budget.json). tree-sitter-typescript's
# TSX grammar never returns on some texts of 213 characters, its memory past 2 GB, its TypeScript grammar on others
# (grammar_fuzz_tsx_hang.json, grammar_fuzz_gave_up.json); on this budget TSX's gives up on one in 0.06 s, after
# 100 kB of code in 0.34 s, with 1 MB in about 3 s.
BUDGET_BASE = 1_000
BUDGET_PER_KB = 50


def budget_for(size: int) -> int:
    """The progress checks a parse of ``size`` bytes may take before it gives up."""
    return BUDGET_BASE + BUDGET_PER_KB * (size >> 10)


class _Parser:
    """A tree-sitter parser that gives up (:class:`ParseGaveUp`) past a budget of parse steps that grows with the
    text, where a grammar would not return: a request of the daemon must not hang on one.

    The budget counts tree-sitter's progress checks, not seconds, so the same text gives up the same way on any
    machine and under any load. After a parse gives up the parser is reset (a later parse would go on with the
    abandoned one's state). ``masked`` reads every character past U+FFFF as four ``_`` (the same bytes, so offsets
    and edits stay): tree-sitter-bash's external scanner (0.23.3 to 0.25.1, all published) reads freed memory on
    some of them (valgrind's "Invalid read ... in tree_sitter_bash_external_scanner_scan", a block freed by
    ``ts_subtree_release``; a daemon dead of SIGSEGV now and then in the fuzz suite on `#{` and U+872B6 in a shell
    script). Such characters are text in strings and comments; the trees keep their shape."""

    __slots__ = ("_lang", "_masked", "_parser")

    def __init__(self, lang: str, masked: bool = False) -> None:
        self._lang, self._masked = lang, masked
        self._parser = tree_sitter.Parser(get_language(lang))

    def parse(self, source: bytes, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
        if self._masked:
            source = _ASTRAL.sub(b"____", source)
        tree, _ = parse_counted(self._parser, source, budget_for(len(source)), old_tree)
        if tree is None:
            raise ParseGaveUp(self._lang, len(source))
        return tree


def parse_counted(parser: tree_sitter.Parser, source: bytes, budget: int,
                  old_tree: tree_sitter.Tree | None = None) -> tuple[tree_sitter.Tree | None, int]:
    """``source`` parsed by ``parser`` (``old_tree``: incrementally), stopped past ``budget`` progress checks: the
    tree, None where it stopped (the parser reset), and the checks it took."""
    checks = 0

    def progress(_offset: int, _has_error: bool) -> bool:
        nonlocal checks
        checks += 1
        return checks > budget

    given: list[bytes] | None = []  # the chunks returned while the parse runs
    view = memoryview(source)

    def read(byte: int, _point: tuple[int, int]) -> bytes:
        # a new object each time (a slice of all of ``source`` would be ``source`` itself, which others hold). The
        # tree keeps this callback and reads its nodes' ``text`` through it later: those reads are released properly
        chunk = bytes(view[byte : byte + 65536])
        if given is not None and len(chunk) > 1:  # shorter ones are shared (b"", a cached byte): not ours to count
            given.append(chunk)
        return chunk

    try:  # a callback to read by (tree-sitter ignores progress_callback when given the bytes)
        tree = (parser.parse(read, progress_callback=progress) if old_tree is None
                else parser.parse(read, old_tree, progress_callback=progress))
    except ValueError:  # "Parsing failed": the budget ran out
        tree = None
    finally:
        kept, given = given, None
        _drop_kept_references(kept or [])
    if tree is None:
        parser.reset()
    return tree, checks


def _drop_kept_references(chunks: list[bytes]) -> None:
    """Drop the reference py-tree-sitter keeps to each chunk a read callback returned.

    py-tree-sitter 0.26.1's read wrapper takes a buffer of the object the callback returns and releases the buffer,
    but never the object (``parser.c``: ``rv`` from ``PyObject_Call`` is not decremented): every chunk of every
    parse stayed in memory, a document's text at each reparse (245 MB in 3,000 reparses of an 80 KB file). Once
    the parse has returned nothing else holds a chunk but ``chunks``, so a count one above that is the kept
    reference, and only then is one dropped (a py-tree-sitter without the bug leaves the counts alone)."""
    for chunk in chunks:
        if sys.getrefcount(chunk) == _KEPT_REFCOUNT:  # the list, this loop's name, getrefcount's argument, the kept one
            ctypes.pythonapi.Py_DecRef(ctypes.py_object(chunk))


_KEPT_REFCOUNT = 4


_MASKED = frozenset({"bash"})


def get_parser(lang: str) -> _Parser:
    """A parser for `lang`, cached per language (and per thread, since parsers hold state)."""
    parsers: dict[str, _Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(lang)
    if parser is None:
        parser = _Parser(lang, masked=lang in _MASKED)
        parsers[lang] = parser
    return parser


def is_supported(lang: str | None) -> bool:
    """True when `lang` has a grammar we can load."""
    if lang is None or lang not in _GRAMMARS:
        return False
    try:
        get_language(lang)
    except (ImportError, AttributeError):
        return False
    return True
