"""Prints the mechanism experiments' gate results side by side (run.sh)."""
import json
import sys

work, names = sys.argv[1], sys.argv[2:]


def load(name):
    cells = {}
    for r in json.load(open(f"{work}/{name}.json")):
        c = cells.setdefault(r["cell"], {"ok": True, "gated": []})
        if r["gated"]:
            c["gated"].append(r)
            c["ok"] = c["ok"] and bool(r["pass"])
    return cells


runs = {n: load(n) for n in names}
print("| cell | " + " | ".join(names) + " |")
print("| --- |" + " --- |" * len(names))
for cell in runs[names[0]]:
    out = []
    for n in names:
        c = runs[n][cell]
        worst = max(c["gated"], key=lambda r: r["rel_err"] if r["rel_err"] is not None else float("inf"))
        err = "n/a" if worst["signed_err"] is None else f"{100 * worst['signed_err']:+.1f}%"
        out.append(f"{'PASS' if c['ok'] else 'FAIL'} {worst['metric']} {err}")
    print(f"| {cell.split('-', 2)[2]} | " + " | ".join(out) + " |")
print()
for n in names:
    cells = runs[n]
    errs = sorted(r["rel_err"] for c in cells.values() for r in c["gated"] if r["rel_err"] is not None)
    train = sum(1 for k, c in cells.items() if c["ok"] and "codellama" not in k)
    held = sum(1 for k, c in cells.items() if c["ok"] and "codellama" in k)
    print(f"{n}: {train + held}/{len(cells)} pass (train {train}/12, held out {held}/6), "
          f"median gated error {100 * errs[len(errs) // 2]:.2f} %")
