"""moto_server for the test suites, with its Step Functions JSONPath parses cached.

moto's Step Functions engine parses every InputPath, OutputPath,
ResultPath and Parameters path anew each time a state runs, and each
parse builds jsonpath_ng's PLY grammar tables again: 4-13 ms of the
emulator's one core per path, a fifth of what the integration suite
costs it. A parsed path is a value that finding matches never changes,
so one parse per distinct path gives the same answers. Anything this
does not recognise (another moto, another jsonpath_ng) runs unpatched.
"""

import functools
import sys


def cache_jsonpath_parses():
    try:
        from moto.stepfunctions.parser.asl.utils import json_path
        from moto.stepfunctions.parser.asl.component.common.path import result_path
    except ImportError:
        return
    for module in (json_path, result_path):
        parse = getattr(module, "parse", None)
        if callable(parse):
            module.parse = functools.lru_cache(maxsize=4096)(parse)


if __name__ == "__main__":
    cache_jsonpath_parses()
    from moto.server import main

    sys.exit(main())
