# The shipped rubric's correctness cases as the grader's two case lists (reduction, scan) for
# `reduce-scan-bench --cases FILE`: python3 expand_rubric.py RUBRIC REDUCTION.json SCAN.json
import json, sys
r = json.load(open(sys.argv[1]))
def n(s):
    if isinstance(s, int): return s
    b, _, a = s.partition('+'); e = int(b.split('^')[1]); return 2**e + (int(a) if a else 0)
lists = {'reduction': [], 'scan': []}
for it in r['items']:
    for c in it['cases']:
        for s in c['sizes']:
            for t in c.get('types', ['uint']):
                for op in c.get('ops', ['sum']):
                    for ls in c.get('local_sizes', [c.get('local_size', 'auto')]):
                        for k in c.get('scan_kinds', ['inclusive'] if it['task'] == 'scan' else [None]):
                            e = {'task': it['task'], 'variant': it['variant'], 'type': t, 'op': op, 'n': n(s),
                                 'local_size': 0 if ls == 'auto' else ls}
                            if k: e['scan_kind'] = k
                            lists[it['task']].append(e)
for f, k in ((sys.argv[2], 'reduction'), (sys.argv[3], 'scan')):
    json.dump({'cases': lists[k]}, open(f, 'w'))
    print(k, len(lists[k]), 'cases')
