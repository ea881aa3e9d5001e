"""The `autodiff` command line: each command is a typed signature and one library call."""

from __future__ import annotations

from typing import Annotated

import typer

from . import run as run_module

app = typer.Typer(
    name="autodiff",
    help="Run PyTorch-style tensor programs (.tg) on a NumPy autograd engine.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"autodiff {version('autodiff-tg')}")
        except PackageNotFoundError:
            typer.echo("autodiff (not installed)")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", help="Show the version and exit.",
                                          callback=_version, is_eager=True)] = False,
) -> None:
    """autodiff: see autograd work, from the shell."""


@app.command()
def run(
    file: Annotated[str, typer.Argument(help="The .tg program to run; '-' reads standard input.")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q",
                                        help="Print only what the program prints.")] = False,
) -> None:
    """Run a .tg program and print what PyTorch would print, then a summary of its tensors.

    Example: autodiff run samples/seed_scalar_derivative.tg
    """
    raise typer.Exit(run_module.run_path(file, quiet=quiet))
