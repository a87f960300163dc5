// SPDX-License-Identifier: GPL-2.0
/*
 * What the PMI handler and the sampling tick count in NMI and hard
 * interrupt context (each ring's throttles, unthrottles and lost samples)
 * is told through notify/ from process context: a work item compares the
 * counts with what it told last, at most every NOTE_PERIOD, so a storm of
 * throttles is one event per session and CPU, with the count.
 */
#include <linux/jiffies.h>

#include "../notify/notify.h"
#include "sample.h"

#define NOTE_PERIOD	msecs_to_jiffies(100)

static const u8 note_cmd[] = {
	ARCHPMU_GENL_EVENT_THROTTLE, ARCHPMU_GENL_EVENT_UNTHROTTLE, ARCHPMU_GENL_EVENT_LOST,
};

/*
 * The ring's own counts (not its page's, which user space can write) are
 * single words written on the ring's CPU: a racy read is whole.
 */
static void tell(struct archpmu_sample *sm)
{
	unsigned int i, k;
	u64 now[ARRAY_SIZE(note_cmd)];

	for (i = 0; i < sm->nr; i++) {
		struct archpmu_sampler *smp = &sm->smp[i];

		now[0] = READ_ONCE(smp->ring.throttled);
		now[1] = READ_ONCE(smp->ring.unthrottled);
		now[2] = READ_ONCE(smp->ring.dropped);
		for (k = 0; k < ARRAY_SIZE(note_cmd); k++) {
			if (now[k] == smp->noted[k])
				continue;
			archpmu_notify_sampling(sm->cl, note_cmd[k], sm->cl->cpus[i].cpu,
						now[k] - smp->noted[k], now[k]);
			smp->noted[k] = now[k];
		}
	}
}

static void notes_fn(struct work_struct *work)
{
	struct archpmu_sample *sm = container_of(to_delayed_work(work), struct archpmu_sample,
						 notes);

	tell(sm);
	schedule_delayed_work(&sm->notes, NOTE_PERIOD);
}

void archpmu_sample_notes_start(struct archpmu_sample *sm)
{
	INIT_DELAYED_WORK(&sm->notes, notes_fn);
	sm->notes_on = true;
	schedule_delayed_work(&sm->notes, NOTE_PERIOD);
}

/* After the release: the counts are final. */
void archpmu_sample_notes_stop(struct archpmu_sample *sm)
{
	if (!sm->notes_on)
		return;
	cancel_delayed_work_sync(&sm->notes);
	sm->notes_on = false;
	tell(sm);
}
