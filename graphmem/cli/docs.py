"""docs/cli.md from the CLI's own help: ``python -m graphmem.cli.docs > docs/cli.md``.

Every command's ``--help``, rendered at a fixed width so the file is the same on every machine;
a test fails when the file is stale.
"""

from __future__ import annotations

from typer.main import get_command

from graphmem.cli.main import app

#: Columns the help is wrapped at (a terminal's width would make the file differ per machine).
WIDTH = 100

HEADER = """# graphmem command reference

Generated from each command's `--help` by `python -m graphmem.cli.docs > docs/cli.md`; do not
edit by hand. Options given before the command (`graphmem --uri ... recall ...`) are the
connection options of `graphmem` itself.
"""


def render() -> str:
    """The whole reference as Markdown: one section per command, sub-commands after their
    group, in name order."""
    sections = [HEADER]

    def walk(command, ctx) -> None:
        sections.append(f"## `{ctx.command_path}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n")
        names = command.list_commands(ctx) if hasattr(command, "list_commands") else []
        for name in sorted(names):
            child = command.get_command(ctx, name)
            if child is not None and not child.hidden:
                walk(
                    child,
                    child.context_class(
                        child, info_name=name, parent=ctx, terminal_width=WIDTH, max_content_width=WIDTH
                    ),
                )

    root = get_command(app)
    walk(root, root.context_class(root, info_name="graphmem", terminal_width=WIDTH, max_content_width=WIDTH))
    return "\n".join(sections)


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
