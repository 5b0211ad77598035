"""The Cypher loader (``graphmem.adapters.neo4j.queries``) and the mode rule of ``Neo4jConnection``, with no
server: header parsing, declared against used parameters, ``file:line`` errors, placeholder
values, and which transactions may run which files."""

from __future__ import annotations

import re
import string
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.adapters.neo4j.driver import ALLOWED_MODES, Neo4jConnection, run
from graphmem.adapters.neo4j.queries import cypher_root, load, migrations, parse
from graphmem.errors import ConfigurationError, InvalidInput
from graphmem.settings.config import Settings

NAMES = st.text(string.ascii_lowercase, min_size=1, max_size=6)


def write(tmp_path: Path, text: str, name: str = "q.cypher") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_header_gives_mode_params_values_and_body(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "// mode: schema\n// values: dimensions:int, analyzer:name\n// Purpose line.\n"
        "CREATE INDEX x FOR (n:N) ON (n.v) OPTIONS {d: {{dimensions}}, a: '{{analyzer}}'}\n",
    )
    query = parse(path, "area/q")
    assert (query.name, query.mode, query.params, query.path) == ("area/q", "schema", frozenset(), path)
    assert query.values == {"dimensions": "int", "analyzer": "name"}
    assert query.text.startswith("CREATE INDEX") and "//" not in query.text
    assert query.render(dimensions=384, analyzer="standard-no-stop-words").endswith(
        "{d: 384, a: 'standard-no-stop-words'}"
    )


@pytest.mark.parametrize("value", ["0", "-1", "1e3", "384; DROP", "1234567"])
def test_render_refuses_a_value_that_is_not_its_type(tmp_path: Path, value: str) -> None:
    query = parse(write(tmp_path, "// mode: schema\n// values: dimensions:int\nRETURN {{dimensions}}\n"), "q")
    with pytest.raises(InvalidInput, match="dimensions"):
        query.render(dimensions=value)
    with pytest.raises(InvalidInput, match="needs values"):
        query.render()


@given(declared=st.sets(NAMES, max_size=4), used=st.sets(NAMES, max_size=4))
def test_params_must_be_declared_and_used(tmp_path_factory, declared: set[str], used: set[str]) -> None:
    """A file loads exactly when its header declares the parameters its body uses; otherwise
    the error names the file and the line at fault."""
    body = "\n".join(f"WITH ${p} AS v{n}" for n, p in enumerate(sorted(used))) or "RETURN 1"
    text = f"// mode: read\n// params: {', '.join(sorted(declared))}\n// Purpose.\n{body}\nRETURN 1\n"
    path = write(tmp_path_factory.mktemp("q"), text)
    if declared == used:
        assert parse(path, "q").params == frozenset(used)
        return
    with pytest.raises(ConfigurationError) as info:
        parse(path, "q")
    undeclared = sorted(used - declared)
    if undeclared:
        line = 4 + sorted(used).index(undeclared[0])
        assert str(info.value) == f"{path}:{line}: ${undeclared[0]} is used but not declared in the header"
    else:
        assert str(info.value).startswith(f"{path}:1: declared but unused: ")


def test_params_in_strings_and_comments_do_not_count(tmp_path: Path) -> None:
    text = (
        "// mode: read\n// params: scope\n// Purpose.\n"
        "MATCH (n) WHERE n.scope = $scope AND n.url <> 'http://x/$notaparam'\n"
        '  // $alsonot in a comment line\nRETURN "$nor" AS s\n'
    )
    assert parse(write(tmp_path, text), "q").params == frozenset({"scope"})


@pytest.mark.parametrize(
    "text, message",
    [
        ("// params: x\nRETURN $x\n", "header 'mode' must be read|write|schema|fragment, got None"),
        ("// mode: delete\nRETURN 1\n", "header 'mode' must be read|write|schema|fragment, got 'delete'"),
        ("// mode: read\n// Purpose only.\n", "no query body"),
        ("// mode: schema\n// values: d:float\nRETURN {{d}}\n", "value 'd' has unknown type 'float'"),
        ("// mode: schema\nRETURN {{d}}\n", "placeholders ['d'] != declared values []"),
    ],
)
def test_bad_headers_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigurationError) as info:
        parse(path, "q")
    assert str(info.value) == f"{path}:1: {message}"


def test_an_inline_include_splices_the_fragment_where_it_stands(tmp_path: Path) -> None:
    step = load("recall/walk_step")
    text = (
        "// mode: read\n// params: frontier\n// Purpose.\nWITH $frontier AS seeds, [] AS seen\n"
        "CALL (seeds, seen) {\n  {{include recall/walk_step}}\n}\nRETURN reached\n"
    )
    query = parse(write(tmp_path, text), "q")
    assert query.params == step.params | {"frontier"}
    assert query.text.index(step.text) < query.text.index("RETURN reached")
    with pytest.raises(ConfigurationError) as info:
        parse(write(tmp_path, text.replace("recall/walk_step", "recall/hop")), "q")
    assert str(info.value).endswith(":6: include 'recall/hop' is not a fragment")


def test_an_include_inside_a_line_splices_the_fragment_there(tmp_path: Path) -> None:
    visible = load("recall/entry_visible")
    text = (
        "// mode: read\n// params: scope\n// Purpose.\n"
        "MATCH (e:Entry) WHERE e.scope = $scope AND {{include recall/entry_visible}}\nRETURN e\n"
    )
    query = parse(write(tmp_path, text), "q")
    assert query.params == {"scope", "s", "t_lo", "t_hi"} == visible.params | {"scope"}
    assert f"e.scope = $scope AND {visible.text}\nRETURN e" in query.text and "{{" not in query.text


def test_the_entry_visibility_rule_has_one_home() -> None:
    """Visibility at system time s and world times [t_lo, t_hi) is written once: recall/entry_live
    (the system-time half) and recall/entry_visible; every recall list includes them."""
    rule = re.compile(r"\.s_(from|to)\s*[<>]|\$(s|t_lo|t_hi)\b")
    written = {
        name
        for name in shipped()
        for line in load(name).path.read_text().splitlines()
        if not line.startswith("//") and rule.search(line)
    }
    assert written == {"recall/entry_live", "recall/entry_visible"}
    live = load("recall/entry_live").text
    lists = ["recall/hybrid", "recall/hybrid_v5", "recall/neighbours", "recall/neighbours_v5", "recall/hop"]
    assert all(live in load(name).text for name in lists)


def test_every_shipped_query_loads_and_migrations_are_numbered_in_order() -> None:
    root = cypher_root()
    names = [
        p.relative_to(root).with_suffix("").as_posix()
        for p in sorted(root.rglob("*.cypher"))
        if p.parent.name != "migrations"
    ]
    assert names and all(load(n).mode in ("read", "write", "schema", "fragment") for n in names)
    for fragment in (n for n in names if load(n).mode == "fragment"):  # each is included somewhere
        assert any(fragment in load(n).path.read_text() for n in names if n != fragment), fragment
    numbers = [m.number for m in migrations()]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert all(m.statements for m in migrations())
    with pytest.raises(ConfigurationError, match="no Cypher file"):
        load("nowhere/nothing")


# -- mode enforcement -------------------------------------------------------------------------
class _Tx:
    def __init__(self, sent: list[str]):
        self.sent = sent

    def run(self, text: str, params: dict) -> list:
        self.sent.append(text)
        return []


class _Session:
    def __init__(self, sent: list[str]):
        self.tx = _Tx(sent)

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def execute_read(self, fn):
        return fn(self.tx)

    def execute_write(self, fn):
        return fn(self.tx)


class _Driver:
    """Records the query text each transaction sends; never connects."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def session(self, database: str, **_: object) -> _Session:
        return _Session(self.sent)

    def get_server_info(self) -> SimpleNamespace:
        return SimpleNamespace(protocol_version=(5, 8))

    def close(self) -> None:
        pass


def shipped() -> list[str]:
    root = cypher_root()
    return [
        p.relative_to(root).with_suffix("").as_posix()
        for p in sorted(root.rglob("*.cypher"))
        if p.parent.name != "migrations"
    ]


@pytest.mark.parametrize("access", ["read", "write"])
def test_a_transaction_runs_only_the_modes_it_allows(access: str) -> None:
    """Every shipped file, through ``read``/``write`` and inside ``read_tx``/``write_tx``:
    a read transaction runs read files only, a write one read and write files, neither a
    schema file; a refused file is never sent and the error names it."""
    driver = _Driver()
    conn = Neo4jConnection(Settings(), driver=driver)
    direct = conn.read if access == "read" else conn.write
    in_tx = conn.read_tx if access == "read" else conn.write_tx
    sample = {"name": "x", "int": 1}
    for name in shipped():
        query = load(name)
        params = dict.fromkeys(query.params)
        if query.values:  # a query with placeholders runs only rendered
            with pytest.raises(ConfigurationError, match="render its values first"):
                direct(name, **params)
            query = query.rendered(**{k: sample[kind] for k, kind in query.values.items()})
        calls = [lambda: direct(query, **params), lambda: in_tx(lambda tx: run(tx, query, **params), what=name)]
        for call in calls:
            before = len(driver.sent)
            if query.mode in ALLOWED_MODES[access]:
                call()
                assert driver.sent[before:] == [query.text]
            else:
                with pytest.raises(ConfigurationError, match=re.escape(f"{query.path}: a {query.mode} query")):
                    call()
                assert driver.sent[before:] == []


class _Capture:
    def __init__(self) -> None:
        self.params: dict = {}

    def run(self, text: str, params: dict) -> list:
        self.params = params
        return []


def _shown(value: object) -> str:
    """The reference: a map shows its values, a list (at any depth) only its length."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_shown(item)}" for key, item in value.items()) + "}"
    return f"<list of {len(value)}>" if isinstance(value, list) else repr(value)


_VALUES = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=12,
)


@settings(deadline=None)  # the first example loads the query files
@given(params=st.dictionaries(NAMES, _VALUES, max_size=4))
def test_parameters_go_as_given_and_show_lists_by_length(params: dict) -> None:
    """The driver formats every statement's parameters for its debug log even when it is off:
    ``run`` sends the same values, but every list, also inside a map (a recall's question
    vectors), is shown by its length only."""
    tx = _Capture()
    run(tx, load("admin/server_version"), **params)
    assert tx.params == params
    assert repr(tx.params) == _shown(params)
