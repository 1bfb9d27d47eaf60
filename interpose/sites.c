#include "interpose/sites.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing over site ids; frames packed in one growing array. Sized for the
 * distinct call sites of a program, not its calls: a loop allocating a million times
 * from one line is one site. */
#define MAX_SITES (1u << 16)
#define INDEX_SLOTS (MAX_SITES * 2)

struct site {
	uint64_t hash;
	uint32_t first, n;  /* frames[first .. first+n) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct site *sites;        /* sites[0] unused: id 0 means "none" */
static uint32_t n_sites = 1;
static uint32_t *index_slots;     /* site ids, 0 = empty */
static void **frames;
static size_t n_frames, cap_frames;

static uint64_t hash_frames(void *const *f, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++) {
		h ^= (uint64_t)(uintptr_t)f[i];
		h *= 1099511628211ull;
	}
	return h ^ (uint64_t)n;
}

static int same(const struct site *s, void *const *f, int n)
{
	return s->n == (uint32_t)n && memcmp(&frames[s->first], f, (size_t)n * sizeof(*f)) == 0;
}

static int ensure_storage(int n)
{
	if (!sites) {
		sites = calloc(MAX_SITES, sizeof(*sites));
		index_slots = calloc(INDEX_SLOTS, sizeof(*index_slots));
		if (!sites || !index_slots) {
			free(sites);
			free(index_slots);
			sites = NULL;
			index_slots = NULL;
			return -1;
		}
	}
	if (n_frames + (size_t)n > cap_frames) {
		size_t nc = cap_frames ? cap_frames * 2 : 4096;
		while (nc < n_frames + (size_t)n)
			nc *= 2;
		void **nf = realloc(frames, nc * sizeof(*nf));
		if (!nf)
			return -1;
		frames = nf;
		cap_frames = nc;
	}
	return 0;
}

uint32_t gc_sites_intern(void *const *f, int n)
{
	if (n <= 0)
		return 0;
	if (n > GC_SITE_DEPTH_MAX)
		n = GC_SITE_DEPTH_MAX;
	uint64_t h = hash_frames(f, n);
	uint32_t id = 0;
	pthread_mutex_lock(&lock);
	if (ensure_storage(n) == 0) {
		uint32_t slot = (uint32_t)(h & (INDEX_SLOTS - 1));
		for (;; slot = (slot + 1) & (INDEX_SLOTS - 1)) {
			uint32_t cand = index_slots[slot];
			if (!cand) {
				if (n_sites < MAX_SITES) {
					id = n_sites++;
					sites[id] = (struct site){h, (uint32_t)n_frames, (uint32_t)n};
					memcpy(&frames[n_frames], f, (size_t)n * sizeof(*f));
					n_frames += (size_t)n;
					index_slots[slot] = id;
				}
				break;
			}
			if (sites[cand].hash == h && same(&sites[cand], f, n)) {
				id = cand;
				break;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return id;
}

int gc_sites_get(uint32_t id, void **out, int max)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	if (id && id < n_sites) {
		n = (int)sites[id].n < max ? (int)sites[id].n : max;
		memcpy(out, &frames[sites[id].first], (size_t)n * sizeof(*out));
	}
	pthread_mutex_unlock(&lock);
	return n;
}

void gc_sites_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void gc_sites_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void gc_sites_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
}
