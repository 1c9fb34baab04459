"""moto_server for the test suites, made cheaper where moto repeats work.

- Step Functions JSONPath parses are cached. moto's Step Functions engine
  parses every InputPath, OutputPath, ResultPath and Parameters path anew
  each time a state runs, and each parse builds jsonpath_ng's PLY grammar
  tables again: 4-13 ms of the emulator's one core per path. A parsed path
  is a value that finding matches never changes, so one parse per distinct
  path gives the same answers.
- DynamoDB condition expressions are parsed once per distinct expression,
  names and values: moto parses each again for every write, a tenth of
  its CPU over the integration suite. A parsed condition is a tree that
  evaluating it against an item never changes; the parser is given a copy
  of the names and values, as the request's own are left alone either way.
- A DynamoDB TransactWriteItems snapshots the items it touches, not the
  table. moto deep-copies the whole table once per action of every
  transaction so that it can roll back a cancelled one: a cost that grows
  with the table, and was a third of the emulator's CPU over the
  integration suite. A transaction writes only the items its actions name,
  so restoring those items undoes it as restoring the table did.

Anything this does not recognise (another moto, another jsonpath_ng, a
table with a stream, whose records the snapshot would have to undo too)
runs unpatched.
"""

import copy
import functools
import json
import sys
import threading


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


def snapshot_touched_items():
    try:
        from moto.dynamodb import models
        from moto.dynamodb.models.dynamo_type import DynamoType
        from moto.dynamodb.models.table import Table
    except ImportError:
        return
    backend = getattr(models, "DynamoDBBackend", None)
    unpatched = getattr(backend, "transact_write_items", None)
    if unpatched is None or getattr(models, "copy", None) is not copy:
        return
    local = threading.local()

    class CopyKeepingTables:
        """The copy module as models sees it: inside a patched transaction,
        its snapshot of a table is the table itself (the touched items'
        snapshots stand in for it)."""

        def __getattr__(self, name):
            return getattr(copy, name)

        @staticmethod
        def deepcopy(x, memo=None):
            if getattr(local, "active", False) and isinstance(x, Table):
                return x
            return copy.deepcopy(x, memo)

    def touched_items(self, transact_items):
        """(table, hash, range, deep copy of the item or None) for each
        action, or None when one cannot be told: moto then validates it."""
        out = []
        for action in transact_items:
            _, op = next(iter(action.items()))
            table = self.tables.get(op.get("TableName"))
            if table is None:
                continue
            if table.stream_shard is not None:
                return None
            keys = op.get("Key") or op.get("Item") or {}
            h = keys.get(table.hash_key_attr)
            r = keys.get(table.range_key_attr) if table.range_key_attr else None
            if h is None or (table.range_key_attr and r is None):
                return None
            hv = DynamoType(h)
            rv = DynamoType(r) if r is not None else None
            out.append((table, hv, rv, copy.deepcopy(table.get_item(hv, rv))))
        return out

    def restore(table, hv, rv, item):
        if rv is not None:
            if item is None:
                table.items[hv].pop(rv, None)
            else:
                table.items[hv][rv] = item
        elif item is None:
            table.items.pop(hv, None)
        else:
            table.items[hv] = item

    def transact_write_items(self, transact_items):
        try:
            touched = touched_items(self, transact_items)
        except Exception:
            touched = None
        if touched is None:
            return unpatched(self, transact_items)
        local.active = True
        try:
            return unpatched(self, transact_items)
        except BaseException:
            # Latest first, so that a key named twice ends as it was.
            for t in reversed(touched):
                restore(*t)
            raise
        finally:
            local.active = False

    models.copy = CopyKeepingTables()
    backend.transact_write_items = transact_write_items


def cache_condition_parses():
    try:
        from moto.dynamodb import comparisons, models
        from moto.dynamodb.models import table as table_module
    except ImportError:
        return
    parse = getattr(comparisons, "get_filter_expression", None)
    if parse is None or getattr(models, "get_filter_expression", None) is not parse or getattr(table_module, "get_filter_expression", None) is not parse:
        return
    if getattr(models, "create_condition_expression_parser", None) is not comparisons.create_condition_expression_parser:
        return

    @functools.lru_cache(maxsize=4096)
    def parsed(expr, names, values):
        return parse(expr, json.loads(names), json.loads(values))

    def get_filter_expression(expr, names, values):
        try:
            key = (expr, json.dumps(names, sort_keys=True), json.dumps(values, sort_keys=True))
        except (TypeError, ValueError):
            return parse(expr, names, values)
        return parsed(*key)

    class Parser:
        """What models asks create_condition_expression_parser for: a
        parser whose parse() is the cached one."""

        def __init__(self, expr, names, values):
            self.args = (expr, names, values)

        def parse(self):
            return get_filter_expression(*self.args)

    models.get_filter_expression = get_filter_expression
    table_module.get_filter_expression = get_filter_expression
    models.create_condition_expression_parser = Parser


if __name__ == "__main__":
    cache_jsonpath_parses()
    cache_condition_parses()
    snapshot_touched_items()
    from moto.server import main

    sys.exit(main())
