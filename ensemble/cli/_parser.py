"""The ``otreebagger`` argument parser: one builder per command, errors on one line."""

from __future__ import annotations

import argparse
from typing import Callable

from ensemble.cli._common import EXIT_USAGE, MODELS, _in_words, _takers

class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (the usage is one --help away)."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class _Version(argparse.Action):
    """--version: the installed distribution's version, read only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("otreebagger")
        except PackageNotFoundError:
            release = "unknown (not installed)"
        print(f"otreebagger {release}")
        parser.exit()


def build_parser(commands: dict[str, Callable[[argparse.Namespace], int]]) -> argparse.ArgumentParser:
    """The parser of ``otreebagger``, each subcommand's ``func`` taken from ``commands`` by name."""
    parser = _Parser(
        prog="otreebagger",
        description="Consistent ordinal classification with decision trees (oTreeBagger).",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_model_commands(sub, commands)
    _add_file_commands(sub, commands)
    return parser


def _applies(dest: str) -> str:
    """Which models take an option, in words: "(OTreeBagger only)"."""
    return f"({_in_words(_takers(dest))})"


def _model_options(p: argparse.ArgumentParser) -> None:
    """The options that build a model; none has a default here, so a model keeps its own."""
    # No defaults here: an option not given leaves the estimator's own default (its docstring says it).
    p.add_argument("--n-estimators", type=int, default=None, metavar="B",
                   help=f"number of trees B {_applies('n_estimators')}; default: each model's own (100 for "
                        "OTreeBagger and its baselines, the smallest B >= 100 the forest certifies); "
                        "boosting chooses its number of trees by early stopping")
    p.add_argument("--group-size", type=int, default=None, metavar="M",
                   help=f"trees per fused group M {_applies('group_size')}; default 3")
    p.add_argument("--max-depth", type=int, default=None, help="depth of every tree (every model); default: "
                   "each model's own, 12 for OTreeBagger, full for the others")
    p.add_argument("--max-regions", type=int, default=None,
                   help=f"largest fused partition per group {_applies('max_regions')}; default 1,000,000")
    p.add_argument("--max-edges", type=int, default=None,
                   help=f"largest region adjacency graph per group, contacts and move pairs {_applies('max_edges')}; "
                        "default 1,000,000")
    p.add_argument("--on-budget", choices=["adapt", "raise"], default=None,
                   help=f"{_applies('on_budget')} a group past --max-regions/--max-edges is made smaller with "
                        "a warning (adapt, default) or stops the fit with an error naming a setting that "
                        "fits (raise)")
    p.add_argument("--projection", choices=["auto", "pls", "additive", "none"], default=None,
                   help=f"{_applies('projection')} the space the groups split: an additive score of the "
                        "continuous features and --residual-axes beside it (additive), PLS components of the "
                        "features (pls) or the features themselves (none); default auto: the features with at "
                        "most four continuous ones (certified at the data's resolution), else additive")
    p.add_argument("--score-model", choices=["auto", "additive", "kernel"], default=None,
                   help=f"{_applies('score_model')} the additive space's score: one curve per feature "
                        "(additive) or kernel ridge regression on up to 500 rows, which follows interactions "
                        "(kernel); default auto: the one that errs less on a held-out quarter (additive "
                        "under --monotone)")
    p.add_argument("--residual-axes", choices=["auto", "pls", "features"], default=None,
                   help=f"{_applies('residual_axes')} beside the additive score: PLS directions of what it "
                        "leaves (pls) or the features a regression tree of that uses most (features); "
                        "default auto: the one that errs less on a held-out quarter")
    p.add_argument("--seed", type=_seed, default=0,
                   help="random seed (every model); default 0, so that a command repeats its result")
    p.add_argument("--n-jobs", type=int, default=None,
                   help=f"parallel jobs (joblib): a count, or -1 for all processors {_applies('n_jobs')}; "
                        "default: one")


def _delimiter_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--delimiter", default=",", type=_one_character, metavar="CHAR",
                   help="the field separator of the CSV files read (default: ,), e.g. ';', or a tab as '\\t' or tab")


def _seed(text: str) -> int:
    """A seed for every model's ``random_state``: an integer from 0 to 2**32 - 1, named as the option."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 4294967295; got {text!r}")
    return value


def _one_character(text: str) -> str:
    # A tab is hard to type in a shell: '\t' (as the CSV reader's own advice writes it) and "tab" name it too.
    if text in ("\\t", "tab"):
        return "\t"
    if len(text) != 1:
        raise argparse.ArgumentTypeError(f"expected one character, such as ';'; got {text!r}")
    return text


def _data_options(p: argparse.ArgumentParser) -> None:
    """The data file and how to read it."""
    p.add_argument("data", help="CSV file with a header row")
    p.add_argument("--target", default="y", help="name of the target column (default: y)")
    _delimiter_option(p)
    p.add_argument("--classes", default=None,
                   help="class order, lowest first, e.g. poor,fair,good (text classes are otherwise "
                        "ordered alphabetically, with a warning)")
    p.add_argument("--categorical", default=None, metavar="COLUMNS",
                   help="comma-separated categorical feature columns (names or 0-based indices; every "
                        "model): moving between categories is not a small move, and the verdict "
                        "leaves them out. Default: as the estimators' categorical_features='auto', "
                        "columns of text and numeric columns of the values 0 and 1 (one-hot, yes/no; "
                        "other two-valued columns are continuous); 'none': every numeric column is "
                        "continuous. A column of words is read as text categories; a column of numbers "
                        "with words in it, only when named here")
    p.add_argument("--monotone", default=None, metavar="NAME=+1,...",
                   help=f"monotone constraints, e.g. income=+1,debt=-1 {_applies('monotone')}")


def _add_model_commands(sub, commands: dict) -> None:
    """demo, evaluate and fit: the commands that build models."""
    names = ", ".join(MODELS)
    demo = sub.add_parser("demo", help="fit on built-in synthetic data and compare with TreeBagger")
    _model_options(demo)
    demo.add_argument("--train-size", type=float, default=0.1,
                      help="training fraction of the 1,000 points (default 0.1)")
    demo.add_argument("--output", default="otreebagger-demo", help="folder for the regions PNG ('' to skip)")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.add_argument("--model", nargs="+", choices=list(MODELS), default=list(MODELS), metavar="MODEL",
                      help=f"models to compare, among {names} (default: all; the first three are drawn)")
    demo.set_defaults(func=commands["demo"])

    evaluate = sub.add_parser("evaluate", help="cross-validated comparison on a CSV file")
    _data_options(evaluate)
    _model_options(evaluate)
    evaluate.add_argument("--folds", type=int, default=5,
                          help="number of folds, at least 2 (default 5; fewer if a class is smaller)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate.add_argument("--model", nargs="+", choices=list(MODELS), default=list(MODELS), metavar="MODEL",
                          help=f"models to compare, among {names} (default: all)")
    evaluate.set_defaults(func=commands["evaluate"])

    fit = sub.add_parser("fit", help="fit a model on a CSV file and save it")
    _data_options(fit)
    _model_options(fit)
    fit.add_argument("--model", choices=list(MODELS), default="otreebagger",
                     help=f"which model, among {names} (default otreebagger): otreebagger is OTreeBagger(), "
                          "forest ConsistentForestClassifier(), boosting ConsistentGradientBoostingClassifier(), "
                          "treebagger OTreeBagger.tree_bagger() (relabel=False, vote='mode', criterion='gini', "
                          "projection='none', max_depth=None) and bagged OTreeBagger(relabel=False, "
                          "projection='none', max_depth=None), each with its Python defaults but for the "
                          "options given; an option a model does not take is refused")
    fit.add_argument("--verbose", action="store_true", help="show a progress bar while fitting (every model)")
    fit.add_argument("-o", "--output", required=True,
                     help="where to save the model: a skops file (e.g. model.skops), which predict loads "
                          "without running code from it; missing folders are created")
    fit.set_defaults(func=commands["fit"])


def _add_file_commands(sub, commands: dict) -> None:
    """predict and audit: the commands that read a saved model."""
    predict = sub.add_parser("predict", help="predict a CSV file with a saved model")
    predict.add_argument("model", help="model file saved by 'otreebagger fit'")
    predict.add_argument("data", help="CSV file with the model's feature columns, matched by name (a target "
                                      "column and columns the model does not use are ignored)")
    predict.add_argument("-o", "--output", required=True,
                         help="CSV file for the predictions (missing folders are created)")
    _delimiter_option(predict)
    predict.add_argument("--proba", action="store_true",
                         help="also write the class probabilities, one column proba_CLASS per class")
    predict.add_argument("--keep", default=None, metavar="COLUMNS",
                         help="comma-separated columns of DATA copied to the output first (e.g. an id)")
    predict.add_argument("--unsafe-pickle", action="store_true",
                         help="also load a pickle (a .joblib of an older version): loading a pickle runs "
                              "code from the file, so only for files you trust")
    predict.set_defaults(func=commands["predict"])

    audit = sub.add_parser("audit", help="find where a saved model jumps two classes, or prove it never does")
    audit.add_argument("model", help="model file: skops (otreebagger fit, or a scikit-learn tree model), a LightGBM "
                       "text model or an XGBoost .json/.ubj model")
    audit.add_argument("data", help="CSV file of the training rows (a target column is ignored)")
    audit.add_argument("--target", default="y", help="name of the target column to ignore (default: y)")
    _delimiter_option(audit)
    audit.add_argument("--resolution", default="auto",
                       help="data, pointwise or a number (default auto: data); exit 0 proved, 1 refuted, 3 unknown")
    audit.add_argument("--categorical", default=None, metavar="COLUMNS",
                       help="comma-separated categorical feature columns (names or 0-based indices), such as "
                            "one-hot columns: no witness moves them (default: the model's own categories)")
    audit.add_argument("--largest", action="store_true",
                       help="search on for the largest jump instead of stopping at the first witness")
    audit.add_argument("--time-limit", type=float, default=60.0,
                       help="seconds for the whole audit (default 60); it returns at once with the first "
                            "witness unless --largest, and a proof may end sooner")
    audit.set_defaults(func=commands["audit"])
