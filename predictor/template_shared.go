package predictor

import "sync"

// sharedTemplates memoizes SharedTemplate by everything a template's
// table work depends on (templateKey), so the points of a sweep or a
// capacity search build each deployment's grids once.
var sharedTemplates = struct {
	mu sync.Mutex
	m  map[templateKey]*sharedEntry
}{m: map[templateKey]*sharedEntry{}}

type sharedEntry struct {
	once sync.Once
	t    *Template
	err  error
}

// maxSharedTemplates bounds the memo: past it the memo starts afresh
// (templates in use stay alive through their deployments). A topology
// search on 8 GPUs needs a few dozen.
const maxSharedTemplates = 256

// SharedTemplate is NewTemplate(cfg), built once per distinct table set,
// model shard and parallel layout in the process and shared (a Template
// is safe for concurrent use). It fails where NewTemplate fails.
func SharedTemplate(cfg Config) (*Template, error) {
	c, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	k := keyOf(c)
	sharedTemplates.mu.Lock()
	e := sharedTemplates.m[k]
	if e == nil {
		if len(sharedTemplates.m) >= maxSharedTemplates {
			sharedTemplates.m = map[templateKey]*sharedEntry{}
		}
		e = &sharedEntry{}
		sharedTemplates.m[k] = e
	}
	sharedTemplates.mu.Unlock()
	e.once.Do(func() { e.t, e.err = NewTemplate(cfg) })
	return e.t, e.err
}
