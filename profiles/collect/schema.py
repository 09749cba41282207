"""The flat CSV schema of the collector's tables, their merge rule, timing
statistics and the meta.yaml writer. Pure Python: no torch here.

Latencies are milliseconds. Each table has key columns (one row per key) and
value columns; writing a table merges into an existing file by key, so runs for
several models, TP sizes or GPU counts accumulate in one set of files.
"""

import csv
import json
import os
import re

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")

TIMING = ["latency", "eager_latency", "p10", "p90", "eager_p10", "eager_p90"]

TABLES = {
    "gemm": {
        "file": "gemm_perf.csv",
        "key": ["gemm_dtype", "m", "n", "k"],
        "value": TIMING + ["kernel"],
    },
    "context_attention": {
        "file": "context_attention_perf.csv",
        "key": ["batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim",
                "attn_dtype", "kv_cache_dtype", "window_size"],
        "value": TIMING + ["kernel"],
    },
    "generation_attention": {
        "file": "generation_attention_perf.csv",
        "key": ["batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim",
                "attn_dtype", "kv_cache_dtype", "window_size"],
        "value": TIMING + ["kernel"],
    },
    "moe": {
        "file": "moe_perf.csv",
        "key": ["moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
                "moe_tp_size", "moe_ep_size", "distribution"],
        "value": TIMING + ["kernel"],
    },
    "comm": {
        "file": "comm_perf.csv",
        "key": ["op_name", "backend", "dtype", "num_gpus", "message_size"],
        "value": TIMING,
    },
    "ops": {
        "file": "ops_perf.csv",
        "key": ["op_name", "tokens", "width", "dtype"],
        "value": TIMING + ["kernel"],
    },
}

META_FILE = "meta.yaml"


def columns(table):
    t = TABLES[table]
    return t["key"] + t["value"]


def _sort_key(key):
    """Numbers sort as numbers, text as text, so 8 comes before 16."""
    out = []
    for v in key:
        try:
            out.append((0, float(v), ""))
        except (TypeError, ValueError):
            out.append((1, 0.0, str(v)))
    return out


def format_value(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v != v:  # NaN: leave empty, the loader treats empty as absent
            return ""
        return f"{v:.6g}"
    return str(v)


def read_table(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def merge_rows(table, old_rows, new_rows):
    """Rows of old and new by key; a new row replaces an old one with the same key."""
    key_cols = TABLES[table]["key"]
    merged = {}
    for r in list(old_rows) + list(new_rows):
        row = {c: format_value(r.get(c)) for c in columns(table)}
        missing = [c for c in key_cols if row[c] == ""]
        if missing:
            raise ValueError(f"{table} row lacks key columns {missing}: {r}")
        merged[tuple(row[c] for c in key_cols)] = row
    return [merged[k] for k in sorted(merged, key=_sort_key)]


def write_table(out_dir, table, rows):
    """Merges rows into out_dir/<table file>; returns the number of rows in the file."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, TABLES[table]["file"])
    merged = merge_rows(table, read_table(path), rows)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns(table), lineterminator="\n")
        w.writeheader()
        w.writerows(merged)
    os.replace(tmp, path)
    return len(merged)


def merge_dirs(into, sources):
    """Merges every table and meta.yaml of the source directories into `into`."""
    counts = {}
    for src in sources:
        for table, t in TABLES.items():
            rows = read_table(os.path.join(src, t["file"]))
            if rows:
                counts[table] = write_table(into, table, rows)
        meta = os.path.join(src, META_FILE)
        if os.path.exists(meta):
            with open(meta) as f:
                append_meta_text(into, f.read())
    return counts


# ---------------------------------------------------------------- statistics


def quantile(xs, q):
    """Linear-interpolated quantile of a non-empty list (q in [0, 1])."""
    if not xs:
        raise ValueError("quantile of an empty list")
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(kernel_ms, eager_ms):
    """The timing columns from per-repeat kernel and eager times (ms)."""
    out = {}
    if kernel_ms:
        out.update(latency=quantile(kernel_ms, 0.5), p10=quantile(kernel_ms, 0.1),
                   p90=quantile(kernel_ms, 0.9))
    if eager_ms:
        out.update(eager_latency=quantile(eager_ms, 0.5), eager_p10=quantile(eager_ms, 0.1),
                   eager_p90=quantile(eager_ms, 0.9))
    return out


# ---------------------------------------------------------------- meta.yaml


def _scalar(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))  # a double-quoted JSON string is a valid YAML scalar


def _key(k):
    k = str(k)
    return k if _PLAIN_KEY.fullmatch(k) else json.dumps(k)


def to_yaml(obj, indent=0):
    """Block YAML for dicts, lists and scalars; keys quoted unless plain identifiers."""
    pad = " " * indent
    lines = []
    if isinstance(obj, dict):
        if not obj:
            return [pad + "{}"]
        for k, v in obj.items():
            k = _key(k)
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:")
                lines.extend(to_yaml(v, indent + 2))
            elif isinstance(v, (dict, list)):
                lines.append(f"{pad}{k}: {'{}' if isinstance(v, dict) else '[]'}")
            else:
                lines.append(f"{pad}{k}: {_scalar(v)}")
        return lines
    if isinstance(obj, list):
        for item in obj:
            if isinstance(item, (dict, list)) and item:
                sub = to_yaml(item, indent + 2)
                lines.append(pad + "- " + sub[0][indent + 2:])
                lines.extend(sub[1:])
            else:
                lines.append(f"{pad}- {_scalar(item) if not isinstance(item, (dict, list)) else '[]'}")
        return lines
    return [pad + _scalar(obj)]


def meta_text(header, runs):
    """meta.yaml: header keys, then `runs:` with one item per collector run."""
    lines = to_yaml(header)
    lines.append("runs:")
    lines.extend(to_yaml(runs, 2))
    return "\n".join(lines) + "\n"


def split_meta(text):
    """(header text, runs item text) of a meta.yaml written by meta_text."""
    marker = "\nruns:\n"
    i = text.find(marker)
    if i < 0:
        return text.rstrip("\n") + "\n", ""
    return text[: i + 1], text[i + len(marker):]


def append_meta_text(out_dir, text):
    """Appends the runs of one meta.yaml text to out_dir/meta.yaml (header kept)."""
    path = os.path.join(out_dir, META_FILE)
    new_header, new_runs = split_meta(text)
    if os.path.exists(path):
        with open(path) as f:
            header, runs = split_meta(f.read())
    else:
        header, runs = new_header, ""
    if runs and not runs.endswith("\n"):
        runs += "\n"
    with open(path, "w") as f:
        f.write(header + "runs:\n" + runs + new_runs)


def write_meta(out_dir, header, run):
    os.makedirs(out_dir, exist_ok=True)
    append_meta_text(out_dir, meta_text(header, [run]))
