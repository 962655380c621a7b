/*
 * The fleet's statements, one per request, and the decoding of their
 * answers.  What the database answers is checked like any peer's
 * bytes: the row and column counts, each number in its range, each
 * string in its shape, before anything of it goes to the parent.
 *
 * Every write of this host is fenced by (attempt, claim epoch, owner
 * host, host epoch, state), and the host's row is read FOR SHARE at
 * its epoch, so a host started again (a new epoch) fences its former
 * self.  A fenced write that matches no row is "superseded": the
 * parent must not retry it.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "log.h"

#define SUBMIT_TRIES	3
#define CLAIM_TRIES	50
#define BACKOFF_MS	"least(300000, 1000 * (1 << least(a.claims, 8)))"

static char	 host[FLEET_NAME_MAX];
static uint64_t	 host_epoch;
static uint32_t	 lease_ms;
static uint32_t	 adopt_after_ms;	/* this host's, as an adopter */
static void	(*hello_done)(uint64_t, int);

/* The host's row at this host's epoch, locked against a new epoch. */
#define HOST_FENCE \
	" AND EXISTS (SELECT 1 FROM fleet_hosts h WHERE h.host = $3" \
	" AND h.epoch = $4::bigint FOR SHARE)"

/*
 * A new epoch for this host: its former self (a child before this one,
 * or a factoryd before a restart) is fenced from here on.  What that
 * self owned is not taken over here: the parent renews each claim its
 * journal holds, which brings it to this epoch (sql_renew_q); a claim
 * the parent never journaled is not renewed, its lease runs out and
 * any host's sweep rescues it (sql_rescue_q).
 */
static const char sql_hello_q[] =
	"INSERT INTO fleet_hosts AS o (host, epoch, state, slots, repos,"
	" heartbeat, lease_until, forges)"
	" VALUES ($1, $2::bigint + 1, 'active', $3::integer,"
	" string_to_array($4, ','), now(),"
	" now() + $5::integer * interval '1 millisecond',"
	" string_to_array($6, ','))"
	" ON CONFLICT (host) DO UPDATE SET"
	" epoch = greatest(o.epoch + 1, EXCLUDED.epoch),"
	" state = CASE WHEN o.state = 'gone' THEN 'active' ELSE o.state END,"
	" slots = EXCLUDED.slots, repos = EXCLUDED.repos,"
	" forges = EXCLUDED.forges,"
	" heartbeat = now(), lease_until = EXCLUDED.lease_until"
	" RETURNING epoch, state";

static const char sql_tenant_q[] =
	"INSERT INTO fleet_tenants AS o (name, weight, max_running,"
	" max_queued, paused, pass)"
	" VALUES ($1, $2::integer, $3::integer, $4::integer, $5::boolean,"
	" coalesce((SELECT min(pass) FROM fleet_tenants), 0))"
	" ON CONFLICT (name) DO UPDATE SET weight = EXCLUDED.weight,"
	" max_running = EXCLUDED.max_running,"
	" max_queued = EXCLUDED.max_queued, paused = EXCLUDED.paused";

/*
 * A tenant with nothing queued or running joins at the others' pass,
 * not behind it: stride scheduling does not bank idle time.  The key
 * makes one attempt: a second submission answers the first's id.  A
 * tenant with max_queued attempts queued takes no more (counted, not
 * locked: two at once may pass it by one); a row without an id says
 * why nothing was made, also when the key made an attempt of another
 * manifest (a key is one submission, never a different one).
 */
static const char sql_submit_q[] =
	"WITH wake AS (UPDATE fleet_tenants t SET pass = greatest(t.pass,"
	"  (SELECT coalesce(min(o.pass), 0) FROM fleet_tenants o"
	"   WHERE o.name <> t.name AND EXISTS (SELECT 1 FROM fleet_attempts q"
	"   WHERE q.tenant = o.name AND q.state = 'queued')))"
	" WHERE t.name = $1 AND NOT EXISTS (SELECT 1 FROM fleet_attempts q"
	"  WHERE q.tenant = $1 AND q.state IN"
	"  ('queued', 'claimed', 'running', 'publishing'))),"
	" ins AS (INSERT INTO fleet_attempts (id, seq, tenant, class, repo,"
	"  digest, manifest, idem_key, max_claims)"
	"  SELECT 'a-' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')"
	"  || '-f' || n, n, $1, $2::smallint, $3, $4, $5, nullif($6, ''),"
	"  $7::integer FROM nextval('fleet_attempt_seq') AS n"
	"  WHERE (SELECT count(*) FROM fleet_attempts q WHERE q.tenant = $1"
	"  AND q.state = 'queued') < (SELECT max_queued FROM fleet_tenants"
	"  WHERE name = $1)"
	"  ON CONFLICT (tenant, idem_key) DO NOTHING RETURNING id),"
	" old AS (SELECT id, digest FROM fleet_attempts WHERE tenant = $1"
	"  AND idem_key = nullif($6, ''))"
	" SELECT id, true, '' FROM ins UNION ALL"
	" SELECT id, false, '' FROM old WHERE NOT EXISTS (SELECT 1 FROM ins)"
	"  AND old.digest = $4"
	" UNION ALL SELECT NULL, false, 'the key names another manifest'"
	"  FROM old WHERE NOT EXISTS (SELECT 1 FROM ins) AND old.digest <> $4"
	" UNION ALL SELECT NULL, false, CASE WHEN t.name IS NULL"
	"  THEN 'no such tenant' ELSE 'the tenant''s queue is full' END"
	"  FROM (SELECT 1) one LEFT JOIN fleet_tenants t ON t.name = $1"
	"  WHERE NOT EXISTS (SELECT 1 FROM ins)"
	"  AND NOT EXISTS (SELECT 1 FROM old) AND (t.name IS NULL OR"
	"  (SELECT count(*) FROM fleet_attempts q WHERE q.tenant = $1"
	"  AND q.state = 'queued') >= t.max_queued)";

/*
 * An attempt this host may claim: not cancelled, and not one it
 * claimed before while another live, active host serves its
 * repository (that one runs it; a host never runs an attempt twice
 * unless it alone can).
 */
#define ELIGIBLE \
	" AND NOT a.cancel_requested AND NOT ($1 = ANY (a.tried) AND" \
	" EXISTS (SELECT 1 FROM fleet_hosts o WHERE o.host <> $1" \
	" AND o.state = 'active' AND o.lease_until > now()" \
	" AND a.repo = ANY (o.repos)))"

/*
 * The claim, one statement.  ready: for each tenant under its cap and
 * not paused, its best class with an attempt this host serves.  The
 * best class of all wins (strict priority); among its tenants, the
 * least pass (stride scheduling), whose row is locked, skipping one
 * another claimer holds; the cap is checked again on the locked row.
 * Then that tenant's oldest attempt of the class, locked, skipping
 * held ones.  The attempt gets the next claim epoch and this host at
 * its epoch; the tenant's counter and pass move on.  One row always:
 * no attempt, but tenants ready, means another claimer held them all
 * for that instant, and the claim is made again (CLAIM_TRIES).
 */
static const char sql_claim_q[] =
	"WITH h AS (SELECT repos FROM fleet_hosts"
	"  WHERE host = $1 AND epoch = $2::bigint AND state = 'active'),"
	" ready AS (SELECT t.name, c.class FROM fleet_tenants t CROSS JOIN h"
	"  CROSS JOIN LATERAL (SELECT a.class FROM fleet_attempts a"
	"   WHERE a.tenant = t.name AND a.state = 'queued'"
	"   AND a.run_after <= now() AND a.repo = ANY (h.repos)" ELIGIBLE
	"   ORDER BY a.class LIMIT 1) c"
	"  WHERE NOT t.paused AND NOT t.held AND t.running < t.max_running),"
	" pick AS (SELECT t.name FROM fleet_tenants t JOIN ready r"
	"  ON r.name = t.name"
	"  WHERE r.class = (SELECT min(class) FROM ready)"
	"  AND NOT t.paused AND NOT t.held AND t.running < t.max_running"
	"  ORDER BY t.pass, t.name LIMIT 1 FOR UPDATE OF t SKIP LOCKED),"
	" att AS (SELECT a.id FROM fleet_attempts a, h"
	"  WHERE a.tenant = (SELECT name FROM pick) AND a.state = 'queued'"
	"  AND a.class = (SELECT min(class) FROM ready)"
	"  AND a.run_after <= now() AND a.repo = ANY (h.repos)" ELIGIBLE
	"  ORDER BY a.seq LIMIT 1 FOR UPDATE OF a SKIP LOCKED),"
	" claimed AS (UPDATE fleet_attempts a SET state = 'claimed',"
	"  epoch = a.epoch + 1, owner_host = $1, owner_epoch = $2::bigint,"
	"  claims = a.claims + 1, claimed = clock_timestamp(),"
	"  tried = CASE WHEN $1 = ANY (a.tried)"
	"  THEN a.tried ELSE array_append(a.tried, $1) END,"
	"  lease_until = now() + $3::integer * interval '1 millisecond'"
	"  FROM att WHERE a.id = att.id"
	"  RETURNING a.id, a.tenant, a.class, a.repo, a.epoch, a.claims,"
	"  a.digest, a.manifest),"
	" bump AS (UPDATE fleet_tenants t SET running = t.running + 1,"
	"  claims = t.claims + 1, pass = t.pass + 1000000 / t.weight"
	"  FROM claimed WHERE t.name = claimed.tenant RETURNING t.name)"
	" SELECT c.id, c.tenant, c.class, c.repo, c.epoch, c.claims,"
	" c.digest, c.manifest, (SELECT count(*) FROM ready)"
	" FROM (SELECT 1) one LEFT JOIN"
	" (claimed c JOIN bump b ON b.name = c.tenant) ON true";

/*
 * An outcome.  Back to the queue after a backoff, or dead-lettered
 * once its claims reached the cap, or cancelled if that was asked
 * meanwhile; leaving the owned states gives the tenant's slot back.
 * The host names the state it last knew: a claim it marked publishing
 * (publishing from claimed, before its publication starts) is past
 * "claimed", and from there only done or failed: once a publication
 * may have begun, it is never handed back to run again.  The mark
 * pins the publication in the same statement: the commit (never to
 * change: fleet_pin_stays) and the publish request an adopter needs.
 */
static const char sql_outcome_q[] =
	"WITH w AS (UPDATE fleet_attempts a SET"
	"  state = CASE WHEN $6 = 'queued' AND a.cancel_requested"
	"   THEN 'cancelled' WHEN $6 = 'queued' AND a.claims >= a.max_claims"
	"   THEN 'dead' ELSE $6 END,"
	"  reason = nullif($7, ''),"
	"  run_after = CASE WHEN $6 = 'queued' THEN now() + " BACKOFF_MS
	"   * interval '1 millisecond' ELSE a.run_after END,"
	"  lease_until = CASE WHEN $6 IN ('running', 'publishing')"
	"   THEN a.lease_until END,"
	"  ended = CASE WHEN $6 IN ('done', 'failed', 'cancelled') OR"
	"   ($6 = 'queued' AND a.claims >= a.max_claims) THEN now() END,"
	"  ran_on = $3,"
	"  cpu_ms = coalesce(a.cpu_ms, 0) + $8::bigint,"
	"  mem_peak = greatest(coalesce(a.mem_peak, 0), $9::bigint),"
	"  wall_ms = coalesce(a.wall_ms, 0) + $10::bigint,"
	"  tokens = coalesce(a.tokens, 0) + $11::bigint,"
	"  cost_uusd = coalesce(a.cost_uusd, 0) + $12::bigint"
	"  WHERE a.id = $1 AND a.epoch = $2::bigint AND a.owner_host = $3"
	"  AND (a.state = $5 OR ($5 = 'claimed' AND a.state = 'publishing'"
	"  AND $6 IN ('publishing', 'done', 'failed')))" HOST_FENCE
	"  RETURNING a.tenant, a.state, a.repo),"
	" t AS (UPDATE fleet_tenants t SET running = t.running - 1 FROM w"
	"  WHERE t.name = w.tenant AND w.state NOT IN"
	"  ('claimed', 'running', 'publishing') RETURNING t.name),"
	" p AS (INSERT INTO fleet_publications (attempt, repo, branch,"
	"  pinned_commit, pinned, request, host, forge)"
	"  SELECT $1, w.repo, 'factory/' || $1, $13, now(), nullif($14, ''),"
	"  $3, nullif($15, '') FROM w"
	"  WHERE $5 = 'claimed' AND $6 = 'publishing' AND $13 <> ''"
	"  ON CONFLICT (attempt) DO UPDATE SET request = EXCLUDED.request,"
	"  host = EXCLUDED.host, pinned_commit = EXCLUDED.pinned_commit,"
	"  forge = EXCLUDED.forge"
	"  RETURNING attempt)"
	" SELECT w.state FROM w";

/*
 * A claim this host holds, by its claim epoch: its lease goes on, and
 * it is owned at the host's present epoch (a restart's adoption).  No
 * row: another host has it, or it ended; never retried.  The lease
 * may have run out already: if no sweep took it meanwhile, nobody else
 * runs it (the owner froze it before the lease ran out), and it goes
 * on.
 */
static const char sql_renew_q[] =
	"UPDATE fleet_attempts a"
	" SET lease_until = now() + $5::integer * interval '1 millisecond',"
	" owner_epoch = $4::bigint"
	" WHERE a.id = $1 AND a.epoch = $2::bigint AND a.owner_host = $3"
	" AND a.state IN ('claimed', 'running', 'publishing')" HOST_FENCE
	" RETURNING CASE WHEN a.cancel_requested THEN 'cancel'"
	" ELSE a.state END";

/*
 * The sweep, run by every host (no leader): an owned attempt whose
 * lease ran out goes back to the queue after a backoff, or is
 * dead-lettered at its cap of claims; one lost while publishing is
 * never run again: adoptable if its pin holds its publish request (a
 * live host finishes it from the forge's side: sql_adopt_q), else
 * dead.  Its owner froze it before the lease ran out and finds it
 * superseded when it comes back.  Rows another host sweeps or renews
 * at this instant are skipped; the tenant's slot is given back.
 */
#define FLEET_PIN_MAX_SQL	"40960"
/* Adoptions lost in turn, past the cap of claims, before it is dead. */
#define ADOPT_TRIES		"3"
_Static_assert(FLEET_PIN_MAX == 40960, "FLEET_PIN_MAX_SQL is FLEET_PIN_MAX");
static const char sql_rescue_q[] =
	"WITH r AS (SELECT a.id, a.state AS was, EXISTS (SELECT 1"
	"  FROM fleet_publications p WHERE p.attempt = a.id"
	"  AND p.host ~ '^[A-Za-z0-9._-]+$'"
	"  AND p.pinned_commit ~ '^[0-9a-f]{40}$'"
	"  AND p.forge ~ '^[0-9a-f]{64}$'"
	"  AND p.request ~ '^[A-Za-z0-9+/]+={0,2}$'"
	"  AND length(p.request) % 4 = 0"
	"  AND length(p.request) < " FLEET_PIN_MAX_SQL ") AS pinned"
	"  FROM fleet_attempts a"
	"  WHERE a.state IN ('claimed', 'running', 'publishing')"
	"  AND a.lease_until < now() ORDER BY a.lease_until LIMIT 64"
	"  FOR UPDATE SKIP LOCKED),"
	" w AS (UPDATE fleet_attempts a SET"
	"  state = CASE WHEN r.was = 'publishing' AND a.cancel_requested"
	"   THEN 'cancelled'"
	"   WHEN r.was = 'publishing' AND r.pinned"
	"   AND a.claims < a.max_claims + " ADOPT_TRIES " THEN 'adoptable'"
	"   WHEN r.was = 'publishing' OR a.claims >= a.max_claims"
	"   THEN 'dead' WHEN a.cancel_requested THEN 'cancelled'"
	"   ELSE 'queued' END,"
	"  reason = CASE WHEN r.was = 'publishing' AND a.cancel_requested"
	"   THEN 'cancelled while publishing, then lost on ' || a.owner_host"
	"   || ': its branch may be on the forge, with no pull request'"
	"   WHEN r.was = 'publishing' AND r.pinned"
	"   AND a.claims < a.max_claims + " ADOPT_TRIES " THEN"
	"   'lost while publishing on ' || a.owner_host || ': adoptable,"
	" finished from the forge by a live host, never run again'"
	"   WHEN r.was = 'publishing' AND r.pinned THEN 'lost while"
	" publishing on ' || a.owner_host || ', " ADOPT_TRIES " adoptions"
	" past its cap of claims: never adopted again'"
	"   WHEN r.was = 'publishing' THEN 'lost while publishing on '"
	"   || a.owner_host || ': no publish request pinned, never run again'"
	"   ELSE 'rescued: the lease of ' || a.owner_host || ' at epoch '"
	"   || a.owner_epoch || ' ran out' END,"
	"  run_after = now() + CASE WHEN r.was = 'publishing' AND r.pinned"
	"   THEN 0 ELSE " BACKOFF_MS " END * interval '1 millisecond',"
	"  ended = CASE WHEN (r.was = 'publishing' AND (a.cancel_requested"
	"   OR NOT r.pinned OR a.claims >= a.max_claims + " ADOPT_TRIES "))"
	"   OR (r.was <> 'publishing' AND (a.claims >= a.max_claims"
	"   OR a.cancel_requested)) THEN now() ELSE a.ended END,"
	"  owner_host = NULL, owner_epoch = NULL, lease_until = NULL"
	"  FROM r WHERE a.id = r.id RETURNING a.tenant, a.state, r.was),"
	" t AS (UPDATE fleet_tenants t SET running = greatest(0,"
	"  t.running - c.n) FROM (SELECT tenant, count(*) AS n FROM w"
	"  GROUP BY tenant) c WHERE t.name = c.tenant RETURNING t.name)"
	" SELECT count(*) FILTER (WHERE state IN ('queued', 'cancelled')"
	"  AND was <> 'publishing'),"
	" count(*) FILTER (WHERE state = 'dead' AND was <> 'publishing'),"
	" count(*) FILTER (WHERE was = 'publishing') FROM w";

/*
 * Adoption: once this host's grace since the sweep is over (its
 * adopt-after, $4, longer than a publication may take: the host that
 * lost it may still be talking to the forge), the oldest adoptable
 * attempt of a repository this
 * live, active host serves under the same name and publishing to the
 * same forge is its own now, publishing under a new claim epoch and a
 * lease like any claim (renewed, swept back to adoptable if it lapses),
 * its tenant's slot taken again; with the host that lost it, the
 * pinned commit and the publish request, and its frozen manifest (the
 * adopter's title and base, bound by the verdict's digest of it).  No
 * row: none.
 */
static const char sql_adopt_q[] =
	"WITH h AS (SELECT repos, forges FROM fleet_hosts WHERE host = $1"
	"  AND epoch = $2::bigint AND state = 'active'"
	"  AND lease_until > now()),"
	" att AS (SELECT a.id FROM fleet_attempts a"
	"  JOIN fleet_publications p ON p.attempt = a.id"
	"  JOIN fleet_tenants t ON t.name = a.tenant, h"
	"  WHERE a.state = 'adoptable'"
	"  AND a.run_after + $4::integer * interval '1 millisecond' <= now()"
	"  AND NOT a.cancel_requested"
	"  AND NOT t.paused AND NOT t.held AND t.running < t.max_running"
	"  AND EXISTS (SELECT 1 FROM unnest(h.repos, h.forges) AS x(r, f)"
	"  WHERE x.r = a.repo AND x.f = p.forge)"
	"  ORDER BY a.seq LIMIT 1 FOR UPDATE OF a, t SKIP LOCKED),"
	" w AS (UPDATE fleet_attempts a SET state = 'publishing',"
	"  epoch = a.epoch + 1, owner_host = $1, owner_epoch = $2::bigint,"
	"  claims = a.claims + 1, claimed = clock_timestamp(),"
	"  lease_until = now() + $3::integer * interval '1 millisecond',"
	"  reason = 'adopted by ' || $1"
	"  FROM att WHERE a.id = att.id"
	"  RETURNING a.id, a.epoch, a.tenant, a.manifest),"
	" t AS (UPDATE fleet_tenants t SET running = t.running + 1 FROM w"
	"  WHERE t.name = w.tenant RETURNING t.name)"
	" SELECT w.id, w.epoch, coalesce(p.host, ''), p.pinned_commit,"
	" p.request, w.manifest"
	" FROM w JOIN fleet_publications p ON p.attempt = w.id";

/*
 * The metrics' gauges: hosts whose lease ran out (not gone), on every
 * row; then what waits per tenant and class, and the oldest one's wait
 * (a row with no tenant: nothing waits).
 */
static const char sql_gauges_q[] =
	"SELECT h.n, q.tenant, q.class, q.n, q.age FROM"
	" (SELECT count(*) AS n FROM fleet_hosts WHERE state <> 'gone'"
	"  AND lease_until < now()) h LEFT JOIN"
	" (SELECT tenant, class, count(*) AS n, greatest(0, floor(extract("
	"  epoch FROM now() - min(created)) * 1000))::bigint AS age"
	"  FROM fleet_attempts WHERE state IN ('queued', 'adoptable')"
	"  GROUP BY tenant, class ORDER BY tenant, class LIMIT 64) q ON true";

/*
 * A queued attempt ends now, and so does an adoptable one (its branch
 * may be on the forge, without a pull request); an owned one is asked
 * (renew says so).
 * Only one of the tenants the asker acts for ($2, comma-separated), or
 * any ($3, root's).
 */
static const char sql_cancel_q[] =
	"UPDATE fleet_attempts SET cancel_requested = true,"
	" reason = CASE WHEN state = 'adoptable' THEN 'cancelled while"
	" adoptable: its branch may be on the forge, with no pull request'"
	" ELSE reason END,"
	" ended = CASE WHEN state = 'adoptable' THEN now() ELSE ended END,"
	" state = CASE WHEN state IN ('queued', 'adoptable') THEN 'cancelled'"
	" ELSE state END"
	" WHERE id = $1 AND state IN"
	" ('queued', 'claimed', 'running', 'publishing', 'adoptable')"
	" AND ($3::boolean OR tenant = ANY (string_to_array($2, ',')))"
	" RETURNING state";

/* What the host serves, again after a reload; its epoch's row only. */
static const char sql_serves_q[] =
	"UPDATE fleet_hosts SET repos = string_to_array($3, ','),"
	" forges = string_to_array($4, ',')"
	" WHERE host = $1 AND epoch = $2::bigint AND state <> 'gone'"
	" RETURNING state";

/* The host's own lease; each claim's is renewed by its own RENEW. */
static const char sql_heartbeat_q[] =
	"UPDATE fleet_hosts SET heartbeat = now(),"
	" lease_until = now() + $3::integer * interval '1 millisecond'"
	" WHERE host = $1 AND epoch = $2::bigint AND state <> 'gone'"
	" RETURNING CASE WHEN state = 'draining' AND drain_until <= now()"
	" THEN 'drain-due' ELSE state END";

/* An operator's word on a host (never "gone"), or a tenant's pause. */
static const char sql_sethost_q[] =
	"UPDATE fleet_hosts SET state = $2, drain_until = CASE WHEN"
	" $2 = 'draining' THEN now() + $3::integer * interval '1 second' END"
	" WHERE host = $1 AND state <> 'gone' RETURNING state";

static const char sql_pause_q[] =
	"WITH u AS (UPDATE fleet_tenants SET held = $2::boolean,"
	"  held_note = CASE WHEN $2::boolean THEN nullif($3, '') END"
	"  WHERE $1 = '' OR name = $1 RETURNING name)"
	" SELECT count(*) FROM u";

/* Every host, and how many attempts it owns at its epoch. */
static const char sql_hosts_q[] =
	"SELECT h.host, h.epoch, h.state, h.slots, (SELECT count(*)"
	" FROM fleet_attempts a WHERE a.owner_host = h.host"
	" AND a.owner_epoch = h.epoch"
	" AND a.state IN ('claimed', 'running', 'publishing')),"
	" greatest(0, floor(extract(epoch FROM now() - h.heartbeat)"
	" * 1000))::bigint, h.lease_until < now()"
	" FROM fleet_hosts h ORDER BY h.host LIMIT 256";

/*
 * A listing's scope (struct fleet_scope): every tenant's rows ($1, the
 * asker is root) or those of the tenants named ($2, comma-separated).
 */
#define SCOPE(col) \
	" ($1::boolean OR " col " = ANY (string_to_array($2, ',')))"

/*
 * Each waiting attempt, in the order claims take them, and the first
 * reason it waits (an adoptable one: that it is, and why): its tenant
 * paused or at its cap, a backoff, no live host that serves its
 * repository, a higher class waiting; else only its turn (a free slot,
 * fair order).
 */
static const char sql_queue_q[] =
	"SELECT a.id, a.tenant, a.class, a.repo,"
	" greatest(0, floor(extract(epoch FROM now() - a.created)"
	" * 1000))::bigint,"
	" CASE WHEN a.state = 'adoptable' THEN 'lost while publishing: '"
	"  || CASE WHEN t.paused OR t.held THEN 'its tenant is paused'"
	"  WHEN t.running >= t.max_running THEN 'its tenant is at its cap'"
	"  WHEN NOT EXISTS (SELECT 1 FROM fleet_hosts h, fleet_publications p,"
	"  unnest(h.repos, h.forges) AS x(r, f) WHERE p.attempt = a.id"
	"  AND h.state = 'active' AND h.lease_until > now()"
	"  AND x.r = a.repo AND x.f = p.forge)"
	"  THEN 'no live host publishes to its forge'"
	"  WHEN a.run_after + $3::integer * interval '1 millisecond' > now()"
	"  THEN 'adopt-after has not passed'"
	"  ELSE 'to be finished from the forge by a host that publishes"
	" to it' END"
	" WHEN t.paused THEN 'its tenant is paused'"
	" WHEN t.held THEN 'its tenant is paused: ' || coalesce(t.held_note, '')"
	" WHEN t.running >= t.max_running THEN 'its tenant is at its cap ('"
	"  || t.running || ' running)'"
	" WHEN a.run_after > now() THEN 'a backoff after a failed claim'"
	" WHEN NOT EXISTS (SELECT 1 FROM fleet_hosts h WHERE h.state ="
	"  'active' AND h.lease_until > now() AND a.repo = ANY (h.repos))"
	"  THEN 'no live host serves its repository'"
	" WHEN EXISTS (SELECT 1 FROM fleet_attempts b WHERE b.state ="
	"  'queued' AND b.class < a.class) THEN 'a higher priority waits'"
	" ELSE 'its turn: a free slot, in fair order' END"
	" FROM fleet_attempts a JOIN fleet_tenants t ON t.name = a.tenant"
	" WHERE a.state IN ('queued', 'adoptable') AND" SCOPE("a.tenant")
	" ORDER BY a.class, a.seq LIMIT 256";

/* Every tenant, its caps, what it runs and has queued, its pauses. */
static const char sql_tenants_q[] =
	"SELECT t.name, t.weight, t.max_running, t.max_queued, t.running,"
	" (SELECT count(*) FROM fleet_attempts a WHERE a.tenant = t.name"
	" AND a.state = 'queued'), t.paused, t.held, coalesce(t.held_note, '')"
	" FROM fleet_tenants t WHERE" SCOPE("t.name")
	" ORDER BY t.name LIMIT 256";

/*
 * What the attempts that ended in the last $3 seconds used, per tenant
 * and the host they ended on (one handed back and run again adds both
 * runs' use, counted with its end).
 */
static const char sql_usage_q[] =
	"SELECT tenant, ran_on, count(*), sum(coalesce(cpu_ms, 0)),"
	" max(coalesce(mem_peak, 0)), sum(coalesce(wall_ms, 0)),"
	" sum(coalesce(tokens, 0)), sum(coalesce(cost_uusd, 0))"
	" FROM fleet_attempts WHERE ended >= now() - $3::integer"
	" * interval '1 second' AND ran_on IS NOT NULL AND" SCOPE("tenant")
	" GROUP BY tenant, ran_on ORDER BY tenant, ran_on LIMIT 256";

static int
res_bool(PGresult *res, int row, int col, int *v)
{
	const char	*s;

	if (PQgetisnull(res, row, col) ||
	    (s = PQgetvalue(res, row, col)) == NULL ||
	    (strcmp(s, "t") != 0 && strcmp(s, "f") != 0)) {
		log_warnx("database: column %d is not a boolean", col);
		return (-1);
	}
	*v = s[0] == 't';
	return (0);
}

static int
res_shape(PGresult *res, int maxrows, int cols)
{
	if (PQntuples(res) > maxrows || PQnfields(res) != cols) {
		log_warnx("database: %d rows of %d columns, expected at most "
		    "%d of %d", PQntuples(res), PQnfields(res), maxrows, cols);
		return (-1);
	}
	return (0);
}

/* An error from the database: the text goes to the parent, escaped. */
static void
sql_error(uint32_t reqid, PGresult *res, const char *err)
{
	fleet_reply(reqid, FLEET_ERROR, err);
}

static void
hello_answered(struct fq *q, PGresult *res, const char *err)
{
	int64_t	 epoch;
	char	 st[16];
	int	 hs;

	if (err != NULL && res == NULL)
		return;		/* the link: said again when it is back */
	if (err != NULL)
		fatalx("hello: %s", err);
	if (res_shape(res, 1, 2) == -1 || PQntuples(res) != 1 ||
	    res_num(res, 0, 0, 1, INT64_MAX, &epoch) == -1 ||
	    res_str(res, 0, 1, st, sizeof(st), NULL) == -1 ||
	    (hs = fleet_hstate_byname(st)) == -1 ||
	    (uint64_t)epoch <= host_epoch)
		fatalx("hello: the database's answer does not decode");
	host_epoch = epoch;
	log_info("host %s at epoch %llu, %s", host,
	    (unsigned long long)host_epoch, st);
	hello_done(host_epoch, hs);
}

/*
 * A host's repositories as a list, and where each of them publishes, by
 * position ("" for nowhere): it adopts only a repository of the name it
 * serves that publishes to the pinned forge, the pair, not either alone.
 */
static void
served_lists(uint32_t n, const char names[][REPO_NAME_MAX],
    const char keys[][FLEET_FORGE_MAX],
    char repos[FLEET_REPOS_MAX * REPO_NAME_MAX],
    char forges[FLEET_REPOS_MAX * FLEET_FORGE_MAX])
{
	uint32_t	 i;

	repos[0] = forges[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0) {
			strlcat(repos, ",", FLEET_REPOS_MAX * REPO_NAME_MAX);
			strlcat(forges, ",", FLEET_REPOS_MAX * FLEET_FORGE_MAX);
		}
		strlcat(repos, names[i], FLEET_REPOS_MAX * REPO_NAME_MAX);
		strlcat(forges, keys[i], FLEET_REPOS_MAX * FLEET_FORGE_MAX);
	}
}

void
sql_hello(const struct fleet_hello *h, void (*done)(uint64_t, int))
{
	struct fq	*q;
	char		 repos[FLEET_REPOS_MAX * REPO_NAME_MAX];
	char		 forges[FLEET_REPOS_MAX * FLEET_FORGE_MAX];

	strlcpy(host, h->host, sizeof(host));
	host_epoch = h->epoch;
	lease_ms = h->lease_ms;
	adopt_after_ms = h->adopt_after_ms;
	hello_done = done;
	served_lists(h->nrepos, h->repos, h->forges, repos, forges);
	q = fq_new(0, sql_hello_q, hello_answered);
	fq_param(q, "%s", host);
	fq_param(q, "%llu", (unsigned long long)h->epoch);
	fq_param(q, "%u", h->slots);
	fq_param(q, "%s", repos);
	fq_param(q, "%u", lease_ms);
	fq_param(q, "%s", forges);
	db_query(q);
}

static void
tenant_answered(struct fq *q, PGresult *res, const char *err)
{
	if (err != NULL)
		sql_error(q->reqid, res, err);
	else
		fleet_reply(q->reqid, FLEET_OK, "");
}

void
sql_tenant(uint32_t reqid, const struct fleet_tenant *t)
{
	struct fq	*q;

	q = fq_new(reqid, sql_tenant_q, tenant_answered);
	fq_param(q, "%s", t->name);
	fq_param(q, "%u", t->weight);
	fq_param(q, "%u", t->max_running);
	fq_param(q, "%u", t->max_queued);
	fq_param(q, "%s", t->paused ? "true" : "false");
	db_query(q);
}

static struct fq *submit_query(uint32_t, struct fleet_submit *, int);

static void
submit_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_submit	*s = q->arg;
	struct fleet_submitted	 r;
	char			 why[64];
	int			 created;

	memset(&r, 0, sizeof(r));
	if (err != NULL) {
		if (strcmp(db_sqlstate(res), "23503") == 0)
			fleet_reply(q->reqid, FLEET_REFUSED, "no such tenant");
		else
			sql_error(q->reqid, res, err);
	} else if (res_shape(res, 1, 3) == -1)
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
	else if (PQntuples(res) == 1 && PQgetisnull(res, 0, 0)) {
		if (res_str(res, 0, 2, why, sizeof(why), NULL) == -1 ||
		    (strcmp(why, "no such tenant") != 0 &&
		    strcmp(why, "the tenant's queue is full") != 0 &&
		    strcmp(why, "the key names another manifest") != 0))
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		else
			fleet_reply(q->reqid, FLEET_REFUSED, why);
	} else if (PQntuples(res) == 0) {
		/* The key's other submission committed meanwhile. */
		if (q->tries + 1 < SUBMIT_TRIES) {
			db_query(submit_query(q->reqid, s, q->tries + 1));
			return;
		}
		fleet_reply(q->reqid, FLEET_ERROR, "the key is contended");
	} else if (res_str(res, 0, 0, r.id, sizeof(r.id),
	    fleet_valid_id) == -1 || res_bool(res, 0, 1, &created) == -1)
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
	else {
		r.created = created;
		fleet_send(IMSG_FLEET_SUBMITTED, q->reqid,
		    fleet_submitted_compose(&r));
	}
	free(s->manifest);
	free(s);
}

static struct fq *
submit_query(uint32_t reqid, struct fleet_submit *s, int tries)
{
	struct fq	*q;

	q = fq_new(reqid, sql_submit_q, submit_answered);
	q->name = "submit";
	q->arg = s;
	q->tries = tries;
	fq_param(q, "%s", s->tenant);
	fq_param(q, "%u", s->class);
	fq_param(q, "%s", s->repo);
	fq_param(q, "%s", s->digest);
	fq_param(q, "%s", s->manifest);
	fq_param(q, "%s", s->key);
	fq_param(q, "%u", s->max_claims);
	return (q);
}

/* s is the caller's, malloc'd: the query frees it. */
void
sql_submit(uint32_t reqid, struct fleet_submit *s)
{
	db_query(submit_query(reqid, s, 0));
}

static void	claim_query(uint32_t, int);

static void
claim_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_claimed	 c;
	int64_t			 v[3];
	int			 bad;

	memset(&c, 0, sizeof(c));
	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, 1, 9) == -1 || PQntuples(res) != 1 ||
	    res_num(res, 0, 8, 0, INT32_MAX, &v[0]) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	if (PQgetisnull(res, 0, 0)) {
		if (v[0] > 0 && q->tries + 1 < CLAIM_TRIES)
			claim_query(q->reqid, q->tries + 1);
		else
			fleet_reply(q->reqid, FLEET_NONE, v[0] > 0 ?
			    "contended" : "");
		return;
	}
	bad = res_str(res, 0, 0, c.id, sizeof(c.id), fleet_valid_id) |
	    res_str(res, 0, 1, c.tenant, sizeof(c.tenant), fleet_valid_name) |
	    res_num(res, 0, 2, 0, FLEET_NCLASSES - 1, &v[0]) |
	    res_str(res, 0, 3, c.repo, sizeof(c.repo), fleet_valid_name) |
	    res_num(res, 0, 4, 1, INT64_MAX, &v[1]) |
	    res_num(res, 0, 5, 1, FLEET_CLAIMS_MAX, &v[2]) |
	    res_str(res, 0, 6, c.digest, sizeof(c.digest),
	    fleet_valid_digest);
	if (bad == 0 && !PQgetisnull(res, 0, 7) &&
	    PQgetlength(res, 0, 7) <= FLEET_MANIFEST_MAX)
		c.manifest = PQgetvalue(res, 0, 7);
	if (bad != 0 || c.manifest == NULL ||
	    strlen(c.manifest) != (size_t)PQgetlength(res, 0, 7)) {
		/* Claimed but unusable: its lease runs out, it is rescued. */
		fleet_reply(q->reqid, FLEET_ERROR, "a claim that does not "
		    "decode");
		return;
	}
	c.class = v[0];
	c.epoch = v[1];
	c.claims = v[2];
	fleet_send(IMSG_FLEET_CLAIMED, q->reqid, fleet_claimed_compose(&c));
}

static void
claim_query(uint32_t reqid, int tries)
{
	struct fq	*q;

	q = fq_new(reqid, sql_claim_q, claim_answered);
	q->name = "claim";
	q->tries = tries;
	fq_param(q, "%s", host);
	fq_param(q, "%llu", (unsigned long long)host_epoch);
	fq_param(q, "%u", lease_ms);
	db_query(q);
}

void
sql_claim(uint32_t reqid)
{
	claim_query(reqid, 0);
}

/*
 * One row, one state (an attempt's, a host's, or "cancel"): ok.  No
 * row: a fenced write is superseded; a cancel found nothing to cancel.
 */
static void
state_answered(struct fq *q, PGresult *res, const char *err, int none,
    const char *why)
{
	char	 st[16];

	if (err != NULL)
		sql_error(q->reqid, res, err);
	else if (res_shape(res, 1, 1) == -1)
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
	else if (PQntuples(res) == 0)
		fleet_reply(q->reqid, none, why);
	else if (res_str(res, 0, 0, st, sizeof(st), NULL) == -1 ||
	    (fleet_state_byname(st) == -1 && fleet_hstate_byname(st) == -1 &&
	    strcmp(st, "cancel") != 0 && strcmp(st, "drain-due") != 0))
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
	else
		fleet_reply(q->reqid, FLEET_OK, st);
}

static void
write_answered(struct fq *q, PGresult *res, const char *err)
{
	state_answered(q, res, err, FLEET_SUPERSEDED, "");
}

static void
cancel_answered(struct fq *q, PGresult *res, const char *err)
{
	state_answered(q, res, err, FLEET_REFUSED,
	    "no such attempt of your tenants waiting or running");
}

static void
fence_params(struct fq *q, const struct fleet_write *w)
{
	fq_param(q, "%s", w->id);
	fq_param(q, "%llu", (unsigned long long)w->epoch);
	fq_param(q, "%s", host);
	fq_param(q, "%llu", (unsigned long long)host_epoch);
}

void
sql_write(uint32_t type, uint32_t reqid, const struct fleet_write *w)
{
	struct fq	*q;

	switch (type) {
	case IMSG_FLEET_RENEW:
		q = fq_new(reqid, sql_renew_q, write_answered);
		q->name = "renew";
		fence_params(q, w);
		fq_param(q, "%u", lease_ms);
		break;
	case IMSG_FLEET_OUTCOME:
		q = fq_new(reqid, sql_outcome_q, write_answered);
		q->name = "outcome";
		fence_params(q, w);
		fq_param(q, "%s", fleet_state_name(w->from));
		fq_param(q, "%s", fleet_state_name(w->to));
		fq_param(q, "%s", w->reason);
		fq_param(q, "%llu", (unsigned long long)w->use.cpu_ms);
		fq_param(q, "%llu", (unsigned long long)w->use.mem_peak);
		fq_param(q, "%llu", (unsigned long long)w->use.wall_ms);
		fq_param(q, "%llu", (unsigned long long)w->use.tokens);
		fq_param(q, "%llu", (unsigned long long)w->use.cost_uusd);
		fq_param(q, "%s", w->commit);
		fq_param(q, "%s", w->pin != NULL ? w->pin : "");
		fq_param(q, "%s", w->forge);
		break;
	default:
		fatalx("sql_write: type %u", type);
	}
	db_query(q);
}

/* A statement of this host at its epoch, with the lease: $1 to $3. */
static struct fq *
host_fq(uint32_t reqid, const char *sql, const char *name, fq_done done)
{
	struct fq	*q;

	q = fq_new(reqid, sql, done);
	q->name = name;
	fq_param(q, "%s", host);
	fq_param(q, "%llu", (unsigned long long)host_epoch);
	fq_param(q, "%u", lease_ms);
	return (q);
}

static void
host_query(uint32_t reqid, const char *sql, const char *name,
    fq_done done)
{
	db_query(host_fq(reqid, sql, name, done));
}

void
sql_heartbeat(uint32_t reqid)
{
	host_query(reqid, sql_heartbeat_q, "heartbeat", write_answered);
}

static void
sethost_answered(struct fq *q, PGresult *res, const char *err)
{
	state_answered(q, res, err, FLEET_REFUSED, "no such host");
}

static void
pause_answered(struct fq *q, PGresult *res, const char *err)
{
	int64_t	 n;
	char	 text[32];

	if (err != NULL)
		sql_error(q->reqid, res, err);
	else if (res_shape(res, 1, 1) == -1 || PQntuples(res) != 1 ||
	    res_num(res, 0, 0, 0, INT32_MAX, &n) == -1)
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
	else if (n == 0)
		fleet_reply(q->reqid, FLEET_REFUSED, "no such tenant");
	else {
		snprintf(text, sizeof(text), "%lld", (long long)n);
		fleet_reply(q->reqid, FLEET_OK, text);
	}
}

void
sql_setstate(uint32_t reqid, const struct fleet_setstate *st)
{
	struct fq	*q;

	if (st->what == FLEET_SET_HOST) {
		q = fq_new(reqid, sql_sethost_q, sethost_answered);
		q->name = "sethost";
		fq_param(q, "%s", st->name);
		fq_param(q, "%s", fleet_hstate_name(st->state));
		fq_param(q, "%u", st->deadline_s);
	} else {
		q = fq_new(reqid, sql_pause_q, pause_answered);
		q->name = "pause";
		fq_param(q, "%s", st->name);
		fq_param(q, "%s", st->state ? "true" : "false");
		fq_param(q, "%s", st->note);
	}
	db_query(q);
}

static void
rescue_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_rescued	 r;
	int64_t			 v[3];

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, 1, 3) == -1 || PQntuples(res) != 1 ||
	    res_num(res, 0, 0, 0, FLEET_ROWS_MAX, &v[0]) == -1 ||
	    res_num(res, 0, 1, 0, FLEET_ROWS_MAX, &v[1]) == -1 ||
	    res_num(res, 0, 2, 0, FLEET_ROWS_MAX, &v[2]) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	memset(&r, 0, sizeof(r));
	r.requeued = v[0];
	r.dead = v[1];
	r.adoptable = v[2];
	fleet_send(IMSG_FLEET_RESCUED, q->reqid, fleet_rescued_compose(&r));
}

void
sql_rescue(uint32_t reqid)
{
	struct fq	*q;

	q = fq_new(reqid, sql_rescue_q, rescue_answered);
	q->name = "rescue";
	db_query(q);
}

static void
adopt_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_adopt	 a;
	struct ibuf		*b;
	int64_t			 epoch;
	char			*pin, *manifest;

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, 1, 6) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	if (PQntuples(res) == 0) {
		fleet_reply(q->reqid, FLEET_NONE, "");
		return;
	}
	memset(&a, 0, sizeof(a));
	pin = PQgetvalue(res, 0, 4);
	manifest = PQgetvalue(res, 0, 5);
	if (res_str(res, 0, 0, a.id, sizeof(a.id), fleet_valid_id) == -1 ||
	    res_num(res, 0, 1, 1, INT64_MAX, &epoch) == -1 ||
	    res_str(res, 0, 2, a.host, sizeof(a.host), fleet_valid_name) ==
	    -1 || res_str(res, 0, 3, a.commit, sizeof(a.commit),
	    fleet_valid_commit) == -1 || strlen(a.commit) != 40 ||
	    PQgetisnull(res, 0, 4) || (size_t)PQgetlength(res, 0, 4) >=
	    FLEET_PIN_MAX || strlen(pin) != (size_t)PQgetlength(res, 0, 4) ||
	    pin[0] == '\0' || !fleet_valid_pin(pin) ||
	    PQgetisnull(res, 0, 5) || (size_t)PQgetlength(res, 0, 5) >
	    FLEET_MANIFEST_MAX ||
	    strlen(manifest) != (size_t)PQgetlength(res, 0, 5)) {
		/* Never adopted: its lease lapses, and the sweep ends it. */
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	a.epoch = (uint64_t)epoch;
	a.pin = pin;
	a.manifest = manifest;
	/* A row fleet_adopt_compose refuses is a bad answer too. */
	if ((b = fleet_adopt_compose(&a)) == NULL)
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
	else
		fleet_send(IMSG_FLEET_ADOPTED, q->reqid, b);
}

void
sql_adopt(uint32_t reqid)
{
	struct fq	*q;

	/* $4: this host's own grace since the sweep. */
	q = host_fq(reqid, sql_adopt_q, "adopt", adopt_answered);
	fq_param(q, "%u", adopt_after_ms);
	db_query(q);
}

static void
gauges_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_gaugerow	 g;
	struct ibuf		*b;
	int64_t			 expired = 0, v[3];
	char			 text[32];
	int			 i;

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, FLEET_GAUGES_MAX, 5) == -1 || PQntuples(res) < 1 ||
	    res_num(res, 0, 0, 0, FLEET_CAP_MAX, &expired) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	for (i = 0; i < PQntuples(res); i++) {
		if (PQgetisnull(res, i, 1))
			continue;
		memset(&g, 0, sizeof(g));
		if (res_str(res, i, 1, g.tenant, sizeof(g.tenant),
		    fleet_valid_name) == -1 ||
		    res_num(res, i, 2, 0, FLEET_NCLASSES - 1, &v[0]) == -1 ||
		    res_num(res, i, 3, 1, FLEET_CAP_MAX, &v[1]) == -1 ||
		    res_num(res, i, 4, 0, FLEET_AGE_MAX, &v[2]) == -1) {
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
			return;
		}
		g.class = v[0];
		g.queued = v[1];
		g.oldest_ms = v[2];
		if ((b = fleet_gaugerow_compose(&g)) == NULL) {
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
			return;
		}
		fleet_send(IMSG_FLEET_GAUGEROW, q->reqid, b);
	}
	snprintf(text, sizeof(text), "%lld", (long long)expired);
	fleet_reply(q->reqid, FLEET_OK, text);
}

void
sql_gauges(uint32_t reqid)
{
	struct fq	*q;

	q = fq_new(reqid, sql_gauges_q, gauges_answered);
	q->name = "gauges";
	db_query(q);
}

static void
hosts_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_hostrow	 h;
	int64_t			 v[5];
	char			 st[16];
	int			 i, bad;

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, FLEET_ROWS_MAX, 7) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	for (i = 0; i < PQntuples(res); i++) {
		memset(&h, 0, sizeof(h));
		bad = res_str(res, i, 0, h.host, sizeof(h.host),
		    fleet_valid_name) |
		    res_num(res, i, 1, 0, INT64_MAX, &v[0]) |
		    res_str(res, i, 2, st, sizeof(st), NULL) |
		    res_num(res, i, 3, 0, FLEET_CAP_MAX, &v[1]) |
		    res_num(res, i, 4, 0, FLEET_CAP_MAX, &v[2]) |
		    res_num(res, i, 5, 0, INT64_MAX, &v[3]) |
		    res_bool(res, i, 6, &h.expired);
		if (bad != 0 || (v[4] = fleet_hstate_byname(st)) == -1) {
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
			return;
		}
		h.epoch = v[0];
		h.state = v[4];
		h.slots = v[1];
		h.running = v[2];
		h.heartbeat_ms = v[3];
		fleet_send(IMSG_FLEET_HOSTROW, q->reqid,
		    fleet_hostrow_compose(&h));
	}
	fleet_reply(q->reqid, FLEET_OK, "");
}

static void
queue_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_queuerow	 r;
	int64_t			 v[2];
	int			 i, bad;

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, FLEET_ROWS_MAX, 6) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	for (i = 0; i < PQntuples(res); i++) {
		memset(&r, 0, sizeof(r));
		bad = res_str(res, i, 0, r.id, sizeof(r.id), fleet_valid_id) |
		    res_str(res, i, 1, r.tenant, sizeof(r.tenant),
		    fleet_valid_name) |
		    res_num(res, i, 2, 0, FLEET_NCLASSES - 1, &v[0]) |
		    res_str(res, i, 3, r.repo, sizeof(r.repo),
		    fleet_valid_name) |
		    res_num(res, i, 4, 0, INT64_MAX, &v[1]) |
		    res_str(res, i, 5, r.why, sizeof(r.why), fleet_valid_text);
		if (bad != 0) {
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
			return;
		}
		r.class = v[0];
		r.age_ms = v[1];
		fleet_send(IMSG_FLEET_QUEUEROW, q->reqid,
		    fleet_queuerow_compose(&r));
	}
	fleet_reply(q->reqid, FLEET_OK, "");
}

void
sql_hosts(uint32_t reqid)
{
	db_query(fq_new(reqid, sql_hosts_q, hosts_answered));
}

/* Tenant names, comma-separated, as string_to_array() takes them. */
static void
tenant_param(struct fq *q, const char (*tenants)[FLEET_NAME_MAX],
    uint32_t n)
{
	char		 names[FLEET_TENANTS_MAX * FLEET_NAME_MAX];
	uint32_t	 i;

	names[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strlcat(names, ",", sizeof(names));
		strlcat(names, tenants[i], sizeof(names));
	}
	fq_param(q, "%s", names);
}

/* The scope's two parameters, $1 and $2. */
static void
scope_params(struct fq *q, const struct fleet_scope *sc)
{
	fq_param(q, "%s", sc->all ? "true" : "false");
	tenant_param(q, sc->tenants, sc->ntenants);
}

void
sql_queue(uint32_t reqid, const struct fleet_scope *sc)
{
	struct fq	*q;

	q = fq_new(reqid, sql_queue_q, queue_answered);
	scope_params(q, sc);
	fq_param(q, "%u", adopt_after_ms);
	db_query(q);
}

static void
tenants_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_tenantrow	 t;
	int64_t			 v[5];
	int			 i, bad;

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, FLEET_ROWS_MAX, 9) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	for (i = 0; i < PQntuples(res); i++) {
		memset(&t, 0, sizeof(t));
		bad = res_str(res, i, 0, t.name, sizeof(t.name),
		    fleet_valid_name) |
		    res_num(res, i, 1, 1, FLEET_WEIGHT_MAX, &v[0]) |
		    res_num(res, i, 2, 0, FLEET_CAP_MAX, &v[1]) |
		    res_num(res, i, 3, 0, FLEET_CAP_MAX, &v[2]) |
		    res_num(res, i, 4, 0, FLEET_CAP_MAX, &v[3]) |
		    res_num(res, i, 5, 0, FLEET_CAP_MAX, &v[4]) |
		    res_bool(res, i, 6, &t.paused) |
		    res_bool(res, i, 7, &t.held) |
		    res_str(res, i, 8, t.note, sizeof(t.note),
		    fleet_valid_text);
		if (bad != 0) {
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
			return;
		}
		t.weight = v[0];
		t.max_running = v[1];
		t.max_queued = v[2];
		t.running = v[3];
		t.queued = v[4];
		fleet_send(IMSG_FLEET_TENANTROW, q->reqid,
		    fleet_tenantrow_compose(&t));
	}
	fleet_reply(q->reqid, FLEET_OK, "");
}

void
sql_tenants(uint32_t reqid, const struct fleet_scope *sc)
{
	struct fq	*q;

	q = fq_new(reqid, sql_tenants_q, tenants_answered);
	scope_params(q, sc);
	db_query(q);
}

static void
usage_answered(struct fq *q, PGresult *res, const char *err)
{
	struct fleet_usagerow	 u;
	int64_t			 v[6];
	int			 i, bad;

	if (err != NULL) {
		sql_error(q->reqid, res, err);
		return;
	}
	if (res_shape(res, FLEET_ROWS_MAX, 8) == -1) {
		fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
		return;
	}
	for (i = 0; i < PQntuples(res); i++) {
		memset(&u, 0, sizeof(u));
		bad = res_str(res, i, 0, u.tenant, sizeof(u.tenant),
		    fleet_valid_name) |
		    res_str(res, i, 1, u.host, sizeof(u.host),
		    fleet_valid_name) |
		    res_num(res, i, 2, 0, INT32_MAX, &v[0]) |
		    res_num(res, i, 3, 0, INT64_MAX, &v[1]) |
		    res_num(res, i, 4, 0, INT64_MAX, &v[2]) |
		    res_num(res, i, 5, 0, INT64_MAX, &v[3]) |
		    res_num(res, i, 6, 0, INT64_MAX, &v[4]) |
		    res_num(res, i, 7, 0, INT64_MAX, &v[5]);
		if (bad != 0) {
			fleet_reply(q->reqid, FLEET_ERROR, "a bad answer");
			return;
		}
		u.attempts = v[0];
		u.use.cpu_ms = v[1];
		u.use.mem_peak = v[2];
		u.use.wall_ms = v[3];
		u.use.tokens = v[4];
		u.use.cost_uusd = v[5];
		fleet_send(IMSG_FLEET_USAGEROW, q->reqid,
		    fleet_usagerow_compose(&u));
	}
	fleet_reply(q->reqid, FLEET_OK, "");
}

void
sql_usage(uint32_t reqid, const struct fleet_scope *sc)
{
	struct fq	*q;

	q = fq_new(reqid, sql_usage_q, usage_answered);
	scope_params(q, sc);
	fq_param(q, "%u", sc->since_s);
	db_query(q);
}

/* A request, not an owner's write: any host may ask. */
/* What this host serves, after a reload. */
void
sql_serves(uint32_t reqid, const struct fleet_serves *v)
{
	struct fq	*q;
	char		 repos[FLEET_REPOS_MAX * REPO_NAME_MAX];
	char		 forges[FLEET_REPOS_MAX * FLEET_FORGE_MAX];

	served_lists(v->nrepos, v->repos, v->forges, repos, forges);
	q = fq_new(reqid, sql_serves_q, write_answered);
	q->name = "serves";
	fq_param(q, "%s", host);
	fq_param(q, "%llu", (unsigned long long)host_epoch);
	fq_param(q, "%s", repos);
	fq_param(q, "%s", forges);
	db_query(q);
}

void
sql_cancel(uint32_t reqid, const struct fleet_cancel *k)
{
	struct fq	*q;

	q = fq_new(reqid, sql_cancel_q, cancel_answered);
	q->name = "cancel";
	fq_param(q, "%s", k->id);
	tenant_param(q, k->tenants, k->ntenants);
	fq_param(q, "%s", k->all ? "true" : "false");
	db_query(q);
}
