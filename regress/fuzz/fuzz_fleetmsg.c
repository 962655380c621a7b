/*
 * The messages between the parent and factory-fleet
 * (libcommon/fleetmsg.c), each way: byte 0 picks one of the nineteen
 * decoders, the rest is the payload.  Promises checked: a refusal
 * names the message; what decodes composes again into the input's
 * bytes exactly (the encoding has one form: nothing dropped, nothing
 * tolerated); nothing leaks either way.
 */
#include "fleetmsg.h"
#include "fuzzimsg.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union {
		struct fleet_hello	 hello;
		struct fleet_tenant	 tenant;
		struct fleet_submit	 submit;
		struct fleet_write	 write;
		struct fleet_ready	 ready;
		struct fleet_claimed	 claimed;
		struct fleet_submitted	 submitted;
		struct fleet_result	 result;
		struct fleet_hostrow	 hostrow;
		struct fleet_queuerow	 queuerow;
		struct fleet_rescued	 rescued;
		struct fleet_setstate	 setstate;
		struct fleet_tenantrow	 tenantrow;
		struct fleet_usagerow	 usagerow;
		struct fleet_cancel	 cancel;
		struct fleet_adopt	 adopt;
		struct fleet_gaugerow	 gaugerow;
		struct fleet_scope	 scope;
		struct fleet_serves	 serves;
	} u;
	struct imsg	 imsg;
	char		 err[256];
	const uint8_t	*p = data + 1;
	size_t		 n = size - 1;
	int		 rc = -1;

	if (size < 1)
		return (0);
	memset(&u, 0, sizeof(u));
	err[0] = '\0';
	switch (data[0] % 19) {
	case 0:
		fuzz_imsg(&imsg, IMSG_FLEET_HELLO, p, n);
		if ((rc = fleet_hello_decode(&imsg, &u.hello, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_hello_compose(&u.hello), p, n, "hello");
		break;
	case 1:
		fuzz_imsg(&imsg, IMSG_FLEET_TENANT, p, n);
		if ((rc = fleet_tenant_decode(&imsg, &u.tenant, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_tenant_compose(&u.tenant), p, n,
			    "tenant");
		break;
	case 2:
		fuzz_imsg(&imsg, IMSG_FLEET_SUBMIT, p, n);
		if ((rc = fleet_submit_decode(&imsg, &u.submit, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_submit_compose(&u.submit), p, n,
			    "submit");
		free(u.submit.manifest);
		break;
	case 3:
		fuzz_imsg(&imsg, IMSG_FLEET_OUTCOME, p, n);
		if ((rc = fleet_write_decode(&imsg, &u.write, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_write_compose(&u.write), p, n, "write");
		fleet_write_free(&u.write);
		break;
	case 4:
		fuzz_imsg(&imsg, IMSG_FLEET_READY, p, n);
		if ((rc = fleet_ready_decode(&imsg, &u.ready, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_ready_compose(&u.ready), p, n, "ready");
		break;
	case 5:
		fuzz_imsg(&imsg, IMSG_FLEET_CLAIMED, p, n);
		if ((rc = fleet_claimed_decode(&imsg, &u.claimed, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_claimed_compose(&u.claimed), p, n,
			    "claimed");
		free(u.claimed.manifest);
		break;
	case 6:
		fuzz_imsg(&imsg, IMSG_FLEET_SUBMITTED, p, n);
		if ((rc = fleet_submitted_decode(&imsg, &u.submitted, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_submitted_compose(&u.submitted), p, n,
			    "submitted");
		break;
	case 7:
		fuzz_imsg(&imsg, IMSG_FLEET_RESULT, p, n);
		if ((rc = fleet_result_decode(&imsg, &u.result, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_result_compose(&u.result), p, n,
			    "result");
		break;
	case 8:
		fuzz_imsg(&imsg, IMSG_FLEET_HOSTROW, p, n);
		if ((rc = fleet_hostrow_decode(&imsg, &u.hostrow, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_hostrow_compose(&u.hostrow), p, n,
			    "hostrow");
		break;
	case 9:
		fuzz_imsg(&imsg, IMSG_FLEET_QUEUEROW, p, n);
		if ((rc = fleet_queuerow_decode(&imsg, &u.queuerow, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_queuerow_compose(&u.queuerow), p, n,
			    "queuerow");
		break;
	case 10:
		fuzz_imsg(&imsg, IMSG_FLEET_RESCUED, p, n);
		if ((rc = fleet_rescued_decode(&imsg, &u.rescued, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_rescued_compose(&u.rescued), p, n,
			    "rescued");
		break;
	case 11:
		fuzz_imsg(&imsg, IMSG_FLEET_SETSTATE, p, n);
		if ((rc = fleet_setstate_decode(&imsg, &u.setstate, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_setstate_compose(&u.setstate), p, n,
			    "setstate");
		break;
	case 12:
		fuzz_imsg(&imsg, IMSG_FLEET_TENANTROW, p, n);
		if ((rc = fleet_tenantrow_decode(&imsg, &u.tenantrow, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_tenantrow_compose(&u.tenantrow), p, n,
			    "tenantrow");
		break;
	case 13:
		fuzz_imsg(&imsg, IMSG_FLEET_USAGEROW, p, n);
		if ((rc = fleet_usagerow_decode(&imsg, &u.usagerow, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_usagerow_compose(&u.usagerow), p, n,
			    "usagerow");
		break;
	case 14:
		fuzz_imsg(&imsg, IMSG_FLEET_CANCEL, p, n);
		if ((rc = fleet_cancel_decode(&imsg, &u.cancel, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_cancel_compose(&u.cancel), p, n,
			    "cancel");
		break;
	case 16:
		fuzz_imsg(&imsg, IMSG_FLEET_GAUGEROW, p, n);
		if ((rc = fleet_gaugerow_decode(&imsg, &u.gaugerow, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_gaugerow_compose(&u.gaugerow), p, n,
			    "gaugerow");
		break;
	case 17:
		fuzz_imsg(&imsg, IMSG_FLEET_QUEUE, p, n);
		if ((rc = fleet_scope_decode(&imsg, "FLEET_QUEUE", &u.scope,
		    err, sizeof(err))) == 0)
			fuzz_same(fleet_scope_compose(&u.scope), p, n, "scope");
		break;
	case 18:
		fuzz_imsg(&imsg, IMSG_FLEET_SERVES, p, n);
		if ((rc = fleet_serves_decode(&imsg, &u.serves, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_serves_compose(&u.serves), p, n,
			    "serves");
		break;
	default:
		fuzz_imsg(&imsg, IMSG_FLEET_ADOPTED, p, n);
		if ((rc = fleet_adopt_decode(&imsg, &u.adopt, err,
		    sizeof(err))) == 0)
			fuzz_same(fleet_adopt_compose(&u.adopt), p, n, "adopt");
		fleet_adopt_free(&u.adopt);
		break;
	}
	if (rc == -1)
		FUZZ_ASSERT(err[0] != '\0', "refused without a reason");
	imsg_free(&imsg);
	return (0);
}
