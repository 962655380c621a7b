// The probe of bench/agents.sh: a tiny Anthropic Messages client, run
// as the agent through factory's gateway and directly on the host
// against the same double (node -e, so that it needs no file in the
// sandbox's view).  It sends PROBE_REQUESTS streamed requests one
// after another on one kept-alive connection and prints, when done,
// one JSON line per stamp: "start" (the process), "req" (request i
// sent), "head" (its answer's head arrived: the provider's first
// byte), "sse" (event n of answer i complete).  Stamps are
// CLOCK_REALTIME in microseconds, as the double's; they are kept in
// memory until the end, so that printing costs nothing on the way.
'use strict';
const now = () => Math.round((performance.timeOrigin + performance.now()) *
    1000);
const out = [{ ev: 'start', t: now() }];
const base = process.env.ANTHROPIC_BASE_URL;
const url = new URL(base.replace(/\/$/, '') + '/v1/messages');
const mod = require(url.protocol === 'https:' ? 'https' : 'http');
const agent = new mod.Agent({ keepAlive: true, maxSockets: 1 });
const n = Number(process.env.PROBE_REQUESTS || 20);
const model = process.env.PROBE_MODEL || 'm-probe';

function one(i) {
	return new Promise((resolve, reject) => {
		const body = JSON.stringify({ model: model, max_tokens: 64,
		    stream: true, messages: [{ role: 'user', content: 'hi' }] });
		const req = mod.request(url, { method: 'POST', agent: agent,
		    headers: { 'content-type': 'application/json',
		    'content-length': Buffer.byteLength(body),
		    'anthropic-version': '2023-06-01',
		    'x-api-key': process.env.ANTHROPIC_API_KEY } }, (res) => {
			let buf = '', k = 0;
			out.push({ ev: 'head', i: i, t: now(),
			    status: res.statusCode });
			res.setEncoding('utf8');
			res.on('data', (d) => {
				const t = now();
				let at;
				buf += d;
				while ((at = buf.indexOf('\n\n')) >= 0) {
					buf = buf.slice(at + 2);
					out.push({ ev: 'sse', i: i, n: k++, t: t });
				}
			});
			res.on('end', resolve);
			res.on('error', reject);
		});
		req.on('error', reject);
		out.push({ ev: 'req', i: i, t: now() });
		req.end(body);
	});
}

(async () => {
	try {
		for (let i = 0; i < n; i++)
			await one(i);
	} catch (e) {
		out.push({ ev: 'error', t: now(), error: String(e) });
		process.exitCode = 1;
	}
	for (const o of out)
		console.log(JSON.stringify(o));
	agent.destroy();
})();
