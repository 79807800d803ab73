import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HOUR, MINUTE } from '../../lib/clock.js';
import { slaState, slaTimes } from './sla.js';

const created = new Date('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(created.getTime() + ms);

function incident(priority: 'low' | 'normal' | 'high' | 'urgent', status: 'open' | 'in_progress' | 'resolved' | 'closed' = 'open', resolvedAt?: Date) {
  const { dueAt, warnAt } = slaTimes(created, priority);
  return { status, sla_due_at: dueAt.toISOString(), sla_warn_at: warnAt.toISOString(), resolved_at: resolvedAt?.toISOString() ?? null };
}

describe('SLA clock', () => {
  test('windows by priority: urgent 1 h, high 4 h, normal 24 h, low 48 h', () => {
    for (const [p, hours] of [['urgent', 1], ['high', 4], ['normal', 24], ['low', 48]] as const) {
      assert.equal(slaTimes(created, p).dueAt.getTime() - created.getTime(), hours * HOUR, p);
      assert.equal(slaTimes(created, p).warnAt.getTime() - created.getTime(), hours * HOUR * 0.75, p);
    }
  });

  test('ok just before 75%, warning at 75% and up to due, breached just after due', () => {
    const i = incident('urgent');
    assert.deepEqual(slaState(i, at(45 * MINUTE - 1)), { sla_status: 'ok', sla_breached: false });
    assert.deepEqual(slaState(i, at(45 * MINUTE)), { sla_status: 'warning', sla_breached: false });
    assert.deepEqual(slaState(i, at(HOUR)), { sla_status: 'warning', sla_breached: false });
    assert.deepEqual(slaState(i, at(HOUR + 1)), { sla_status: 'breached', sla_breached: true });
  });

  test('resolving freezes the clock at met or breached', () => {
    const met = incident('high', 'resolved', at(3 * HOUR));
    assert.deepEqual(slaState(met, at(100 * HOUR)), { sla_status: 'met', sla_breached: false });
    const late = incident('high', 'closed', at(5 * HOUR));
    assert.deepEqual(slaState(late, at(5 * HOUR)), { sla_status: 'breached', sla_breached: true });
    assert.deepEqual(slaState(incident('low', 'resolved', at(48 * HOUR)), at(99 * HOUR)).sla_status, 'met', 'resolved exactly at due is met');
  });
});
