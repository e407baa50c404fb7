"""Which tokens of a markdown file name paths (for CTX401 and CTX402, core/rules/references.py): backticked
paths, link targets, `@` mentions that are not imports and bare `src/...`-style tokens, outside code blocks,
comments and frontmatter, each with the shape that says whether it looks unmistakably like a path (see the
references module's docstring for what is skipped and why)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from .. import lazyre
from .. import discovery as D
from ..markdown import Structure, code_spans, find_imports, split_frontmatter, split_lines, structure

# Extensions a slash-less name must carry to be taken for a file name ("web.py", "README.md").
KNOWN_EXT = frozenset(
    "md mdx markdown txt rst adoc py pyi ipynb ts tsx jsx mjs cjs js go rs java kt kts scala rb php cc cpp hpp cs "
    "swift sh bash zsh ps1 sql json jsonc yaml yml toml ini cfg conf xml html css scss sass less vue svelte proto "
    "graphql gql tf hcl lock gradle csv lua ex exs erl dart jl zig".split()
)


# Bare (unformatted) prose is noisier: `node.js` or `a.m.` must not become file names.
_BARE_EXT = KNOWN_EXT - {"js", "conf", "lock", "cfg"}


# `res.json`, `console.log`, `self.config`: receivers of a method call, not files.
_RECEIVERS = frozenset(
    "res req resp response request self this ctx cls os np pd console app window document json math obj data "
    "module exports process err error event evt config settings options opts args kwargs user item value".split()
)


# Stems that stand for any name: placeholders, and the naming conventions of a style guide (`PascalCase.tsx`).
_PLACEHOLDER_STEMS = frozenset("""foo bar baz qux quux example sample something whatever xxx yyy zzz pascalcase
    camelcase kebab-case snake_case snakecase lowercase uppercase titlecase screaming_snake_case""".split())


# `your-skill/`, `my_module.py`: a name the reader is to choose.
_PLACEHOLDER_SEGMENT = lazyre.compile(r"(?:your|my)[-_]", re.IGNORECASE)


# `TEST_SUITE_NAME`, `ComponentName`, `FeatureId`: a word that names what to put there (upper-case words joined by
# underscores; capitalised words ending in Name, Id or Type).
_PLACEHOLDER_WORD = lazyre.compile(r"^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|(?:[A-Z][a-z0-9]+)+(?:Name|Id|ID|Type))$")


# Instruction-file kinds named without a directory ("check for a nearer `AGENTS.override.md`"): a kind of file
# an agent looks for, not a reference to one.
_INSTRUCTION_KINDS = frozenset(n.lower() for n in """CLAUDE.md CLAUDE.local.md AGENTS.md AGENTS.override.md
    GEMINI.md .cursorrules .windsurfrules .clinerules copilot-instructions.md""".split())


# (not `target/`: the walk itself skips the one a build manifest writes, and another is source, see discovery)
EXTRA_SKIP_DIRS = frozenset({"dist", "build", "out", "coverage", "node_modules", ".venv", "venv",
                              "__pycache__", ".next", ".turbo", ".cache", "tmp", ".tmp"})


_LINK = lazyre.compile(
    r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)


_REF_DEF = lazyre.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")


_URL = lazyre.compile(r"<?\b[A-Za-z][A-Za-z0-9+.-]*://[^\s>)\]]*>?|\bwww\.[^\s)\]]+")


_AT = lazyre.compile(r"(?<![\w@.+-])@([A-Za-z0-9._~/-][^\s`'\"()<>\[\],;]*)")


# A whitespace-delimited word holding a `/` or `.` (the lookbehind anchors it at the word's start: without it
# the engine retries every position of every word, quadratic in the word's length).
_BARE = lazyre.compile(r"(?<!\S)[^\s/.]*[/.]\S*")


# A dot starting an extension: every path a code span, mention or prose token can name has one or a `/`.
_DOT_EXT = lazyre.compile(r"\.[A-Za-z0-9]")


_DOT_INSIDE = lazyre.compile(r"\.\S")


_LOWER_NAME = lazyre.compile(r"^[a-z0-9_][a-z0-9_-]*$")


_UPPER_NAME = lazyre.compile(r"^[A-Z][A-Z0-9_-]+$")


SCHEME = lazyre.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


_LINE_SUFFIX = lazyre.compile(r":\d+(?::\d+)?(?:-\d+)?$")


_BAD_CHARS = lazyre.compile(r"[*?\[\]{}<>$%|\\\"'=,;()!^&+@#:\s]")


EXT = lazyre.compile(r"^(.+)\.([A-Za-z0-9]{1,10})$")


_SEGMENT = lazyre.compile(r"^[A-Za-z0-9_.-]+$")


_REMOTES = frozenset({"origin", "upstream"})
_VERSION_SEGMENT = lazyre.compile(r"^v?\d+(?:\.(?:\d+|x|X|\*))*\.(?:x|X|\*)$")


# A qualified name: a lower-case package or module, then an exported (capitalised, camel-case) name.
# (a package's symbol, `asyncio.Lock`, or a module's name, `VutuvWeb.Markdown`: capitalised words after the dots)
_SYMBOL = lazyre.compile(r"^(?:[a-z_][a-z0-9_]*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*)(?:\.[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*)+$")
# One-letter slots for a number or a name: `vN`, `N-slug`, `X.md`, `vX.Y.Z`.
# A slot for a name or number inside a file name: one or two N/X joined by `_`/`-`, an upper-case word amid
# lower-case ones, `<thing>-name`.
_MIME_TYPES = frozenset({"application", "text", "image", "audio", "video", "multipart", "font", "model", "message"})
_MIME_SUBTYPES = frozenset("json plain html markdown xml csv javascript octet-stream pdf png jpeg gif webp mpeg wav "
                           "webm mp4 zip gzip form-data x-www-form-urlencoded event-stream openmetrics-text yaml toml "
                           "css svg+xml ndjson jsonl problem+json graphql protobuf grpc wasm tar mixed related "
                           "alternative byteranges ogg opus flac avif bmp tiff heic rtf msword".split())
# (`test_MODULENAME_api.py`: a lower-case word, then a word in capitals; not `PHASE_2_COMPLETE.md` or
# `2026_BEST_PRACTICES.md`, a document's name in capitals with a number in it)
_NAMED_SLOT = lazyre.compile(r"(?:^|[-_])(?:N{1,4}|X{1,3})(?:[-_]|$)|[a-z][a-z0-9]*[-_][A-Z]{4,}(?:[-_]|$)|^[a-z]+_or_[a-z]+$"
                         r"|^(?:my|new|your|some)[A-Z][a-z]|Xxx|^[a-z]{2,}[XYZ]$"  # (`useX`: any hook)
                         # `specs/YYYYMMDDThhmmss-feature-name.md`: a date
                         r"|Y{4}-?M{2}-?D{2}"
                         # `src/commands/mycommand/`: "my" and a generic noun
                         r"|^(?:my|your)[-_]?(?:command|component|app|project|module|package|plugin|service|feature|"
                         r"lib|library|class|function|skill|agent|tool|widget|page|route|model|handler|hook|test|"
                         r"api|repo|thing|file|folder|dir|crate|controller|view|screen)s?(?:[-_.]|$)"
                         r"|^(?:feature|module|component|package|project|service|app|plugin|skill)[-_]name$"
                         # `content/post/YYYY/MM/DD/HHMMSS.md`: date and time fields as directories and names
                         r"|^(?:Y{2,4}|MM|DD|HH(?:MM(?:SS)?)?|hh(?:mm(?:ss)?)?)$"
                         # `001_name.up.sql`: a numbered migration whose name is the word "name"
                         r"|^\d+[-_]name$"
                         # `test-foo.R`, `foo_test.go`: a made-up name inside a naming convention
                         r"|(?:^|[-_])(?:foo|bar|baz|qux)(?:[-_]|$)")
_SUFFIX_NAME = lazyre.compile(r"^_(?:tests?|specs?|mocks?|fixtures?|stories|story|bench(?:es)?)\.[a-z]+$")
_VERSION_IN_NAME = lazyre.compile(r"(?<![A-Za-z])v?X\.Y(?:\.Z)?(?![A-Za-z])")
_SLOT_WORD = lazyre.compile(r"(?:NAME|Name|ID|Id|TYPE|Type|HERE)$")
_MIXED_CASE_EXT = frozenset({"Rmd", "Rproj", "RData", "Rdata", "Rhistory"})
_SLOT = lazyre.compile(r"^(?:v?[NXYZ](?:-[a-z][\w-]*)?|[XYZ]\.[a-z]{1,5})$")
_VERSION_SLOT = lazyre.compile(r"^v?[XYZN](?:\.[XYZN]){1,3}$")
_XX_SLOT = lazyre.compile(r"(?:^|[-_])xx(?:[-_.]|$)")
_PLACEHOLDER_NAME = lazyre.compile(r"(?:^|[-_.])(?:X{2,}|x{3,}|N{3,}|YYYY)(?:[-_.]|$)|[a-z]Here(?:[-_.]|$)|(?:^|[-_])here(?:[-_.]|$)")


_STRIP_LEAD = "([\"'*_"


_STRIP_TRAIL = ".,;:!?)]\"'*_"


@dataclass
class Ref:
    line: int
    """0-based line of the file."""
    col: int
    """Code-point column where ``text`` starts."""
    text: str
    """The path as written (suffixes like `#frag` or `:12` excluded), i.e. what a fix replaces."""
    kind: str
    """code | link | at | bare"""
    source: str = ""
    """The line it is on."""


# Well-known JavaScript libraries named with a `.js` suffix (lower-cased).
_JS_LIBRARIES = frozenset("""
    node.js next.js nuxt.js vue.js react.js preact.js angular.js ember.js backbone.js knockout.js alpine.js
    solid.js svelte.js nest.js express.js koa.js hapi.js sails.js meteor.js electron.js deno.js bun.js
    chart.js three.js d3.js p5.js pdf.js video.js highlight.js prism.js marked.js anime.js paper.js fabric.js
    matter.js pixi.js babylon.js phaser.js tf.js ml5.js brain.js math.js decimal.js big.js bignumber.js bn.js
    moment.js day.js dayjs.js luxon.js date-fns.js numeral.js accounting.js lodash.js underscore.js ramda.js
    immutable.js immer.js rx.js rxjs.js socket.io.js ethers.js web3.js viem.js crypto.js crypto-js.js
    zod.js yup.js joi.js ajv.js hammer.js swiper.js leaflet.js mapbox.js cesium.js sortable.js dropzone.js
    quill.js tiptap.js slate.js codemirror.js monaco.js xterm.js mermaid.js katex.js mathjax.js popper.js
    tippy.js gsap.js lottie.js howler.js tone.js sinon.js mocha.js chai.js jasmine.js karma.js jest.js
    cypress.js playwright.js puppeteer.js webpack.js rollup.js vite.js esbuild.js parcel.js gulp.js grunt.js
    handlebars.js mustache.js ejs.js pug.js nunjucks.js axios.js superagent.js got.js ky.js node-fetch.js
    jquery.js zepto.js htmx.js stimulus.js turbo.js lit.js polymer.js mithril.js riot.js inferno.js qwik.js
    """.split())


# Import paths of Go's standard library that hold a slash ("a `go/parser`-based encoder", `net/http`): packages,
# not paths, even in a repository with a `go/` or `net/` directory of its own.
_GO_STD = frozenset("""archive/tar archive/zip compress/bzip2 compress/flate compress/gzip compress/lzw compress/zlib
    container/heap container/list container/ring crypto/aes crypto/cipher crypto/des crypto/dsa crypto/ecdh
    crypto/ecdsa crypto/ed25519 crypto/elliptic crypto/hmac crypto/md5 crypto/rand crypto/rc4 crypto/rsa
    crypto/sha1 crypto/sha256 crypto/sha3 crypto/sha512 crypto/subtle crypto/tls crypto/x509 database/sql
    database/sql/driver debug/buildinfo debug/dwarf debug/elf debug/pe embed encoding/ascii85 encoding/asn1
    encoding/base32 encoding/base64 encoding/binary encoding/csv encoding/gob encoding/hex encoding/json
    encoding/pem encoding/xml go/ast go/build go/constant go/doc go/format go/importer go/parser go/printer
    go/scanner go/token go/types go/version hash/adler32 hash/crc32 hash/crc64 hash/fnv hash/maphash
    html/template image/color image/draw image/gif image/jpeg image/png index/suffixarray io/fs io/ioutil
    log/slog log/syslog math/big math/bits math/cmplx math/rand math/rand/v2 mime/multipart mime/quotedprintable
    net/http net/http/httptest net/http/httputil net/http/pprof net/mail net/netip net/rpc net/smtp net/textproto
    net/url os/exec os/signal os/user path/filepath regexp/syntax runtime/debug runtime/pprof runtime/trace
    sync/atomic testing/fstest testing/iotest testing/quick testing/slogtest text/scanner text/tabwriter
    text/template text/template/parse time/tzdata unicode/utf16 unicode/utf8""".split())


# The libraries of the Flutter SDK, imported as `package:flutter/<name>` and often written without the scheme.
_FLUTTER_LIBRARIES = frozenset(f"{n}.dart" for n in """animation cupertino foundation gestures material painting
    physics rendering scheduler semantics services widgets""".split())


@lru_cache(maxsize=65536)
def path_shape(t: str, kind: str) -> tuple[bool, bool, str] | None:
    """Whether token ``t`` (of a code span, link, @ mention or bare prose) is a path, judged from its text
    alone: None when it is not; else (needs its first directory to exist, has a slash, first segment)."""
    if not t or t in (".", "..", "./", "../"):
        return None
    if kind == "link" and (SCHEME.match(t) or t.startswith("#")):
        return None
    if "://" in t or t.startswith(("/", "~", "-", "\\")):
        return None
    if _BAD_CHARS.search(t) or "..." in t or "//" in t:
        return None
    low = t.lower()
    if "path/to/" in low or low.startswith("to/") or "/to/your" in low:
        return None
    segs = t.rstrip("/").split("/")
    if not segs or any(not s or not _SEGMENT.match(s) for s in segs):
        return None
    real = [s for s in segs if s not in (".", "..")]
    if not real:
        return None
    if any(s in D.SKIP_DIRS or s in EXTRA_SKIP_DIRS for s in real):
        return None
    if "/".join(real) in _GO_STD:
        return None  # `go/parser`, `net/http`: a Go standard-library package
    if len(real) == 2 and real[0] == "flutter" and real[1] in _FLUTTER_LIBRARIES:
        return None  # `flutter/foundation.dart`: a Flutter library (`package:flutter/foundation.dart`)
    last = real[-1]
    if last.startswith(".env") or ".local." in last or last.endswith(".local") or last.endswith("~"):
        return None
    if _PLACEHOLDER_NAME.search(last):
        return None  # NNNN-title.md, xxx.py, YYYY-MM-DD.md
    if any(_XX_SLOT.search(s) for s in real):
        return None  # `utils/us_xx_query_fragments.py`, `regions/us_xx/`: `xx` stands for a state or a locale
    if last.isdigit() and len(real) > 1:
        return None  # `mvcc/insert-heavy/2000`: a benchmark id, an issue number, not a file
    m = EXT.match(last)
    ext = m.group(2).lower() if m else None
    stem = m.group(1) if m else last
    if ext is not None and ext.isdigit():
        return None  # versions: v1.2, 3.11
    if _VERSION_SEGMENT.match(last):
        return None  # branches and version series: release/3.x, v2.x
    if len(real) == 2 and real[0] == "roles" and re.fullmatch(r"[a-z][a-zA-Z]*\.[a-z][a-zA-Z]*", real[1]) \
            and real[1].rpartition(".")[2].lower() not in KNOWN_EXT:
        return None  # `roles/logging.logWriter`: a cloud IAM role's name (not Ansible's `roles/main.yml`)
    if real == ["path"] and t.startswith("."):
        return None  # "`@./path`, `@../path`": the word path standing for one
    if real[0] in _REMOTES and len(real) > 1:
        return None  # `origin/release/X.Y.Z`, `upstream/main`: a remote's branch
    if stem.lower() in _PLACEHOLDER_STEMS or stem.split(".")[0].lower() in _PLACEHOLDER_STEMS \
            or any(s.lower() in _PLACEHOLDER_STEMS for s in real[:-1]):
        return None
    if any(_PLACEHOLDER_SEGMENT.match(s) for s in real):
        return None
    # (a file's own name in capitals, `docs/API_GUIDE.md`, is a naming convention for documents, not a slot,
    # unless it says what goes there: `FEATURE_NAME.md`)
    if kind != "link" and any(_PLACEHOLDER_WORD.match(s.split(".")[0]) and (
            i < len(real) - 1 or ext is None or _SLOT_WORD.search(s.split(".")[0])) for i, s in enumerate(real)):
        # (a link names its target on purpose: `[guide](BREADCRUMBS_GUIDE.md)` is a file's name, no slot)
        return None  # `test/TEST_SUITE_NAME/e2e.spec.ts`, `src/fields/ComponentName/`: a slot for a name
    if _SYMBOL.match(last) and last.rpartition(".")[2] not in _MIXED_CASE_EXT:
        return None  # `pkg/syncx.OnceValues`, `asyncio.Lock`, `maputil.Set.MarshalJSON`: a package's symbol
    if any(_NAMED_SLOT.search(s.split(".")[0]) for s in real):
        return None  # `N_module.py`, `NN_name.md`, `TASK-XXX`, `test_MODULENAME_api.py`, `feature-name/`
    if ext == "jl" and "/" not in t and stem[:1].isupper():
        return None  # `RxInfer.jl`, `Plots.jl`: Julia packages are named so
    if len(real) > 1 and last.startswith(".") and EXT.match(real[-2]):
        return None  # `src/OaaWire.h/.cpp`: a pair of files, `OaaWire.h` and `OaaWire.cpp`
    if len(real) == 2 and real[0] in _MIME_TYPES and (real[1].startswith(("x.", "x-", "vnd.", "prs.")) or "+" in real[1]
                                                       or real[1] in _MIME_SUBTYPES):
        return None  # `application/x.gather.msgpack`, `text/markdown`: a media type
    if len(real) == 1 and _SUFFIX_NAME.match(last):
        return None  # "a `_tests.rs` sidecar convention": the suffix of a kind of file
    if _VERSION_IN_NAME.search(last):
        return None  # `RELEASE_NOTES_vX.Y.Z.md`: a version slot inside a name
    if _SLOT.match(last) or _VERSION_SLOT.match(last):
        return None  # `persisted_settings_baselines/vN/`, `client/vX.Y.Z`, `bugfix/N-slug`, `docs/X.md`
    has_slash = "/" in t
    if not has_slash and last.lower() in _INSTRUCTION_KINDS:
        return None
    explicit_rel = segs[0] in (".", "..")
    if explicit_rel and ext is None and kind == "code":
        return None  # `../axiosConfig`: an import specifier, relative to the code file it is written in
    first = real[0]
    if has_slash and not explicit_rel and "." in first and not first.startswith("."):
        return None  # github.com/acme/x, v1.2/notes, docs.python.org/3
    if kind == "link":
        return False, has_slash, first
    if ext == "js" and not has_slash and t.lower() in _JS_LIBRARIES:
        # `decimal.js`, `Next.js`: the names of libraries, not files (`server.js` stays a file name)
        return None
    if kind == "at":
        if has_slash:
            # `@cratis/arc.react`: a scoped package (its "extension" is part of the name); `@docs/x.md` a path
            return (False, True, first) if ((ext is not None and ext in KNOWN_EXT) or explicit_rel) else None
        return (False, False, first) if ext in KNOWN_EXT else None
    if not has_slash:
        if ext is None or stem.split(".")[0].lower() in _RECEIVERS:
            return None
        if kind == "code":
            return (False, False, first) if ext in KNOWN_EXT else None
        if ext not in _BARE_EXT or len(stem) < 2:
            return None
        if not (_LOWER_NAME.match(stem) or _UPPER_NAME.match(stem)):
            return None  # Node.js, MyComponent.tsx in prose
        return False, False, first
    if kind == "code":
        if ext is not None or explicit_rel:
            return False, True, first
        return True, True, first  # `services/billing`: a path when `services/` exists
    # bare prose token with a slash
    if ext is not None:
        return (False, True, first) if ext in _BARE_EXT else None
    if t.endswith("/") or len(real) >= 3:
        return True, True, first
    return None  # client/server, and/or


_FindImports = Callable[[str, Structure, int], "set[tuple[int, int]]"]


def import_cols(body: str, st: Structure, offset: int) -> set[tuple[int, int]]:
    """(0-based line, column of the `@`) of the imports of a file (live or in code): what `prepare()` finds,
    from the structure `extract` has at hand (preparing the whole file costs several times more)."""
    live, dead = find_imports(split_lines(body), st, offset)
    return {(r.line - 1, r.col) for r in live + dead}


def extract(text: str, import_cols: set[tuple[int, int]] | frozenset[tuple[int, int]] | _FindImports,
             into: list | None = None) -> list[Ref]:
    """Path-like references of a markdown file, outside frontmatter, code blocks and HTML comments.
    ``import_cols``: where the file's imports are (see `import_cols`), or how to find them when needed.
    ``into``: receives (frontmatter line offset, body lines), for the mentions' context."""
    fm, body = split_frontmatter(text)
    if into is not None:
        into.extend((fm.end_line, body.split("\n")))
    offset = fm.end_line
    st = structure(body)
    skip = st.code_lines | st.comment_lines
    # The fast scanner sees fences only; indented code needs CommonMark. (The `in` tests are a cheap necessary
    # condition of the regex.)
    if ("\n    " in body or "\n\t" in body) and _INDENTED_BLOCK.search("\n" + body):
        skip = skip | _indented_code(body)
    out: list[Ref] = []
    for i, line in enumerate(body.split("\n")):
        if "/" not in line:
            # Without a `/`, a path needs an extension (`web.py`), except a link target (`[x](notes)`).
            if "." not in line.rstrip(" \r.:!?"):
                continue
            if "[" not in line and not _DOT_EXT.search(line):
                continue
        if i in skip:
            continue
        n = i + offset
        toks = _line_tokens(line[:-1] if line.endswith("\r") else line)
        if not toks:
            continue
        seen: set[str] = set()
        for col, tok, kind, at in toks:
            if at >= 0:
                if callable(import_cols):  # found at the first mention
                    import_cols = import_cols(body, st, offset)
                if (n, at) in import_cols:
                    continue  # an @import: the imports family's
            key = tok.rstrip("/")
            if key not in seen:
                seen.add(key)
                out.append(Ref(n, col, tok, kind, line))
    return out


_Tok = tuple[int, str, str, int]
"""(column, text, kind, column of the `@` for mentions else -1)"""


@lru_cache(maxsize=65536)
def _line_tokens(line: str) -> tuple[_Tok, ...]:
    """Candidate references of one line (cached: instruction files repeat lines a lot)."""
    out: list[_Tok] = []
    cur = line

    def mask(text: str, a: int, b: int) -> str:
        return text[:a] + " " * (b - a) + text[b:]

    # 1. code spans: a single token is a path candidate; anything with whitespace is a command
    if "`" in cur:
        for m in code_spans(line):
            cur = mask(cur, m.start(), m.end())
            content, start = m.group(2), m.start(2)
            if content.startswith(" ") and content.endswith(" ") and content.strip():
                content, start = content[1:-1], start + 1
            if not content or (" " in content or "\t" in content):
                continue
            if content.startswith("@"):
                _token(out, content[1:], start + 1, "at", start)
            else:
                _token(out, content, start, "code")
    # 2. links and reference definitions (target only), then URLs
    if "[" in cur:
        d = _REF_DEF.match(cur)
        if d:
            _link(out, d.group(1), d.start(1))
            cur = mask(cur, d.start(), d.end())
        if "](" in cur:
            for m in list(_LINK.finditer(cur)):
                _link(out, m.group(1), m.start(1))
                cur = mask(cur, m.start(1), m.end(1))
    if "://" in cur or "www." in cur:
        for m in list(_URL.finditer(cur)):
            cur = mask(cur, m.start(), m.end())
    # 3. @ mentions (those the import regex takes are dropped by the caller)
    if "@" in cur:
        for m in list(_AT.finditer(cur)):
            cur = mask(cur, m.start(), m.end())
            _token(out, m.group(1), m.start(1), "at", m.start())
    # 4. bare tokens: one survives `_token`'s stripping only with a `/` or a dot inside (not a sentence's end)
    if "/" in cur or _DOT_INSIDE.search(cur):
        for m in _BARE.finditer(cur):
            tok = m.group(0)
            if "@" not in tok and "`" not in tok:
                _token(out, tok, m.start(), "bare")
    return tuple(out)


def _link(out: list[_Tok], target: str, col: int) -> None:
    if target.startswith("<") and target.endswith(">"):
        target, col = target[1:-1], col + 1
    t = target.split("#", 1)[0].split("?", 1)[0]
    if not t or "%" in t:
        return  # escaped names (`my%20file.md`) cannot be rewritten in place; rare enough to skip
    if t.isalpha() and t.islower():
        return  # `[file.ext:line](link)`, `(url)`: a placeholder word (files without an extension: LICENSE, Makefile)
    out.append((col, t, "link", -1))


def _token(out: list[_Tok], tok: str, col: int, kind: str, at: int = -1) -> None:
    if kind == "bare":
        stripped = tok.lstrip(_STRIP_LEAD)
        col += len(tok) - len(stripped)
        tok = stripped.rstrip(_STRIP_TRAIL)
        if "/" not in tok and "." not in tok:
            return
    elif "#" in tok:
        tok = tok.split("#", 1)[0]
    if ":" in tok:
        tok = _LINE_SUFFIX.sub("", tok)
    if tok:
        out.append((col, tok, kind, at))


# A blank line, then an indented one: searched in "\n" + body, so that the body's start counts as a line start
# (a pattern led by a literal "\n" is searched ten times faster than one led by `(?:^|\n)`).
_INDENTED_BLOCK = lazyre.compile(r"\n[ \t]*\n(?: {4}|\t)[ \t]*\S")


def _indented_code(body: str) -> frozenset[int]:
    """0-based lines of indented code blocks (CommonMark: list continuations are not code)."""
    try:
        from markdown_it import MarkdownIt

        tokens = MarkdownIt("commonmark").disable("inline").parse(body)
    except Exception:
        return frozenset()
    out: set[int] = set()
    for tok in tokens:
        if tok.type == "code_block" and tok.map is not None:
            out.update(range(tok.map[0], tok.map[1]))
    return frozenset(out)
