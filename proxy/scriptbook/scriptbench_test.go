package scriptbook

import "testing"

func BenchmarkRecogniseKnownScript(b *testing.B) {
	var r Registry
	text := "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := r.Recognise("", text); !ok {
			b.Fatal("not recognised")
		}
	}
}

func BenchmarkNormalizeScript(b *testing.B) {
	text := "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nelse\n  return 0\nend\n"
	b.ReportAllocs()
	for b.Loop() {
		_ = normalizeScript(text)
	}
}
