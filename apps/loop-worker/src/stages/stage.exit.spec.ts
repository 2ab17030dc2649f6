import { StageSchema, type Answer, type InteractionPoint, type Outcome, type Stage } from '@parley/contracts';
import { MAX_CHECKPOINT_ROUNDS, nextExitStep, type ExitStep, type VisitCheckpoint } from './stage.exit';

type PointFields = Partial<Record<keyof InteractionPoint, unknown>>;

const stageWith = (...points: PointFields[]): Stage =>
  StageSchema.parse({
    name: 'draft',
    mode: 'interactive_points',
    points: points.map((fields, i) => ({ name: `p${i + 1}`, prompt: `Question ${i + 1}?`, ...fields })),
  });

const review: PointFields = {
  name: 'review',
  prompt: 'Is the draft good?',
  options: ['Approve'],
  directives: { 'More detail': 'Add more detail.' },
  edit_options: ['Edit'],
  abort_options: ['Stop'],
};

const pick = (label: string): Answer => ({ kind: 'multiple_choice', choices: [0], labels: [label] });
const edited = (text: string): Answer => ({ kind: 'edit_text', text });

/**
 * Plays the worker's part: appends what nextExitStep presents or settles, records adopted edits as
 * the document, and lets the test answer the open interaction. Every step taken is kept in `steps`.
 */
class ExitDriver {
  readonly visit: VisitCheckpoint[] = [];
  readonly steps: ExitStep[] = [];
  document = 'model draft 1';
  exit = 0;
  private interactions = 0;

  constructor(
    readonly stage: Stage,
    readonly unattended = false,
  ) {
    this.newExit();
  }

  get effectId(): string {
    return `fx${this.exit}`;
  }

  /** The model calls complete_stage again (after a revise). */
  newExit(document?: string): this {
    this.exit += 1;
    if (document !== undefined) {
      this.document = document;
    }
    return this;
  }

  peek(): ExitStep {
    return nextExitStep({ stage: this.stage, unattended: this.unattended, exitEffectId: this.effectId, document: this.document, visit: this.visit });
  }

  /** Steps until a person is needed or the exit attempt ends; returns that step. */
  run(): ExitStep {
    for (let guard = 0; guard < 100; guard += 1) {
      const step = this.peek();
      this.steps.push(step);
      if (step.kind === 'present') {
        this.visit.push({ effectId: this.effectId, interactionId: `ix${++this.interactions}`, ref: step.ref, prompt: step.prompt });
        return step;
      }
      if (step.kind === 'settle') {
        this.visit.push({ effectId: this.effectId, interactionId: `ix${++this.interactions}`, ref: step.ref, prompt: step.prompt, auto: true });
        continue;
      }
      if (step.kind === 'adopt') {
        const checkpoint = this.visit.find((each) => each.interactionId === step.interactionId)!;
        checkpoint.adopted = true;
        this.document = step.text;
        continue;
      }
      return step;
    }
    throw new Error('the exit did not settle');
  }

  /** Resolves the open interaction, then runs on. */
  answer(answer: Answer | Outcome): ExitStep {
    const open = this.visit.filter((each) => each.resolution === undefined && each.auto !== true);
    expect(open).toHaveLength(1);
    open[0].resolution = typeof answer === 'string' ? { outcome: answer } : { outcome: 'answered', answer };
    return this.run();
  }

  kinds(): string[] {
    return this.steps.map((step) => (step.kind === 'present' || step.kind === 'settle' ? `${step.kind}:${step.ref.point}:${step.ref.purpose}:${step.ref.round}` : step.kind));
  }
}

describe('nextExitStep: stages without checkpoints', () => {
  it.each<[string, Stage]>([
    ['an autonomous stage', StageSchema.parse({ name: 'draft', points: [{ name: 'p', prompt: 'Q?' }] })],
    ['an interactive stage without points', StageSchema.parse({ name: 'draft', mode: 'interactive_points' })],
  ])('approves %s at once', (_case, stage) => {
    expect(new ExitDriver(stage).run()).toEqual({ kind: 'approved', notes: [], proceeded: [] });
  });
});

describe('nextExitStep: one point, attended', () => {
  it('presents the point, then approves with the pick as a note', () => {
    const exit = new ExitDriver(stageWith(review));
    expect(exit.run()).toEqual({
      kind: 'present',
      ref: { stage: 'draft', point: 'review', round: 0, purpose: 'decide' },
      prompt: expect.objectContaining({ kind: 'multiple_choice', prompt: expect.stringContaining('model draft 1') }),
    });
    expect(exit.answer(pick('Approve'))).toEqual({ kind: 'approved', notes: ['review: Approve'], proceeded: [] });
  });

  it('waits while the presented point is unanswered, also when called again', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    expect(exit.peek()).toEqual({ kind: 'wait', interactionId: 'ix1' });
    expect(exit.peek()).toEqual({ kind: 'wait', interactionId: 'ix1' });
  });

  it('revises twice, asking one round later on each new exit, then approves', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    expect(exit.answer(pick('More detail'))).toEqual({ kind: 'revise', point: 'review', directive: 'Add more detail.' });
    expect(exit.peek()).toEqual({ kind: 'revise', point: 'review', directive: 'Add more detail.' }); // idempotent
    expect(exit.newExit('model draft 2').run()).toMatchObject({ kind: 'present', ref: { round: 1 }, prompt: { prompt: expect.stringContaining('model draft 2') } });
    expect(exit.answer(pick('more-detail'))).toMatchObject({ kind: 'revise' });
    expect(exit.newExit('model draft 3').run()).toMatchObject({ kind: 'present', ref: { round: 2 } });
    expect(exit.answer(pick('Approve'))).toEqual({ kind: 'approved', notes: ['review: Approve'], proceeded: [] });
    expect(exit.kinds()).toEqual([
      'present:review:decide:0',
      'revise',
      'present:review:decide:1',
      'revise',
      'present:review:decide:2',
      'approved',
    ]);
  });

  it('opens the output for editing, adopts the edit, asks again, then approves', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    expect(exit.answer(pick('Edit'))).toEqual({
      kind: 'present',
      ref: { stage: 'draft', point: 'review', round: 0, purpose: 'edit' },
      prompt: expect.objectContaining({ kind: 'edit_text', document: 'model draft 1' }),
    });
    expect(exit.peek()).toEqual({ kind: 'wait', interactionId: 'ix2' });
    const asked = exit.answer(edited('my draft'));
    expect(exit.steps.at(-2)).toEqual({ kind: 'adopt', interactionId: 'ix2', text: 'my draft' });
    expect(asked).toMatchObject({ kind: 'present', ref: { purpose: 'decide', round: 1 }, prompt: { prompt: expect.stringContaining('my draft') } });
    expect(exit.answer(pick('Approve'))).toEqual({ kind: 'approved', notes: ['review: Approve'], proceeded: [] });
    expect(exit.kinds()).toEqual(['present:review:decide:0', 'present:review:edit:0', 'adopt', 'present:review:decide:1', 'approved']);
  });

  it('adopts an answered edit only once it is recorded', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    exit.answer(pick('Edit'));
    exit.visit[1].resolution = { outcome: 'answered', answer: edited('mine') };
    expect(exit.peek()).toEqual({ kind: 'adopt', interactionId: 'ix2', text: 'mine' });
    expect(exit.peek()).toEqual({ kind: 'adopt', interactionId: 'ix2', text: 'mine' });
    exit.visit[1].adopted = true;
    expect(exit.peek()).toMatchObject({ kind: 'present', ref: { purpose: 'decide', round: 1 } });
  });

  it('keeps the document and asks again when an edit expires', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    exit.answer(pick('Edit'));
    expect(exit.answer('expired')).toMatchObject({ kind: 'present', ref: { purpose: 'decide', round: 1 }, prompt: { prompt: expect.stringContaining('model draft 1') } });
  });

  it('aborts when an edit is cancelled', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    exit.answer(pick('Edit'));
    expect(exit.answer('cancelled')).toEqual({ kind: 'abort', option: null });
  });

  it('fails when an edit is answered without a text', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    exit.answer(pick('Edit'));
    expect(exit.answer(pick('Approve'))).toMatchObject({ kind: 'fail', error: expect.stringContaining('"review"') });
  });

  it('aborts on an abort option, naming it', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    expect(exit.answer(pick('Stop'))).toEqual({ kind: 'abort', option: 'Stop' });
  });

  it('aborts with no option when the run was stopped', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    expect(exit.answer('cancelled')).toEqual({ kind: 'abort', option: null });
  });

  it('proceeds on a deadline with no note', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    expect(exit.answer('expired')).toEqual({ kind: 'approved', notes: [], proceeded: [{ point: 'review', why: 'deadline' }] });
  });

  it(`settles the point with round_limit after ${MAX_CHECKPOINT_ROUNDS} revisions`, () => {
    const exit = new ExitDriver(stageWith(review));
    for (let round = 0; round < MAX_CHECKPOINT_ROUNDS; round += 1) {
      expect(exit.newExit().run()).toMatchObject({ kind: 'present', ref: { round } });
      expect(exit.answer(pick('More detail'))).toMatchObject({ kind: 'revise' });
    }
    expect(exit.newExit().run()).toEqual({ kind: 'approved', notes: [], proceeded: [{ point: 'review', why: 'round_limit' }] });
    expect(exit.steps.at(-2)).toMatchObject({ kind: 'settle', why: 'round_limit', ref: { round: MAX_CHECKPOINT_ROUNDS, purpose: 'decide' } });
    expect(exit.visit.at(-1)).toMatchObject({ effectId: 'fx6', auto: true });
  });

  it('counts edits and revisions together toward the limit', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    exit.answer(pick('More detail')); // round 1
    exit.newExit().run();
    exit.answer(pick('Edit')); // round 2
    exit.answer(edited('e1'));
    exit.answer(pick('Edit')); // round 3
    exit.answer(edited('e2'));
    expect(exit.answer(pick('Edit'))).toMatchObject({ kind: 'present', ref: { purpose: 'edit', round: 3 } }); // round 4
    expect(exit.answer(edited('e3'))).toEqual({ kind: 'approved', notes: [], proceeded: [{ point: 'review', why: 'round_limit' }] });
    expect(exit.document).toBe('e3');
    expect(exit.kinds()).toEqual([
      'present:review:decide:0',
      'revise',
      'present:review:decide:1',
      'present:review:edit:1',
      'adopt',
      'present:review:decide:2',
      'present:review:edit:2',
      'adopt',
      'present:review:decide:3',
      'present:review:edit:3',
      'adopt',
      'settle:review:decide:4',
      'approved',
    ]);
  });

  it('asks every point afresh on each exit: an approval of an earlier exit does not carry over', () => {
    const exit = new ExitDriver(stageWith(review));
    exit.run();
    exit.answer(pick('Approve'));
    expect(exit.newExit().run()).toMatchObject({ kind: 'present', ref: { round: 0, purpose: 'decide' } });
  });
});

describe('nextExitStep: answer styles', () => {
  it('approves free text as a note and revises on a typed directive key', () => {
    const exit = new ExitDriver(stageWith({ ...review, style: 'free_text' }));
    exit.run();
    expect(exit.answer({ kind: 'free_text', text: 'more-detail' })).toEqual({ kind: 'revise', point: 'review', directive: 'Add more detail.' });
    exit.newExit().run();
    expect(exit.answer({ kind: 'free_text', text: 'Fine, keep the tone.' })).toEqual({ kind: 'approved', notes: ['Fine, keep the tone.'], proceeded: [] });
  });

  it('revises a confirm answered no and approves one answered yes', () => {
    const exit = new ExitDriver(stageWith({ name: 'ok', prompt: 'Ready?', style: 'confirm' }));
    exit.run();
    expect(exit.answer({ kind: 'confirm', confirmed: false })).toEqual({
      kind: 'revise',
      point: 'ok',
      directive: 'The person did not confirm: Ready? Revise your work and try again.',
    });
    exit.newExit().run();
    expect(exit.answer({ kind: 'confirm', confirmed: true })).toEqual({ kind: 'approved', notes: [], proceeded: [] });
  });
});

describe('nextExitStep: several points', () => {
  it('takes points in declared order and collects every note', () => {
    const exit = new ExitDriver(stageWith({ options: ['Yes'] }, { style: 'free_text' }));
    expect(exit.run()).toMatchObject({ kind: 'present', ref: { point: 'p1' } });
    expect(exit.answer(pick('Yes'))).toMatchObject({ kind: 'present', ref: { point: 'p2', round: 0 } });
    expect(exit.answer({ kind: 'free_text', text: 'Note two' })).toEqual({ kind: 'approved', notes: ['p1: Yes', 'Note two'], proceeded: [] });
  });

  it('when the second point revises, asks both again on the next exit, the second one round later', () => {
    const exit = new ExitDriver(stageWith({ options: ['Yes'] }, { options: ['Yes'], directives: { Redo: 'Redo the tests.' } }));
    exit.run();
    exit.answer(pick('Yes'));
    expect(exit.answer(pick('Redo'))).toEqual({ kind: 'revise', point: 'p2', directive: 'Redo the tests.' });
    expect(exit.newExit().run()).toMatchObject({ kind: 'present', ref: { point: 'p1', round: 0 } });
    expect(exit.answer(pick('Yes'))).toMatchObject({ kind: 'present', ref: { point: 'p2', round: 1 } });
    expect(exit.answer(pick('Yes'))).toEqual({ kind: 'approved', notes: ['p1: Yes', 'p2: Yes'], proceeded: [] });
  });

  it('stops at the first point that aborts', () => {
    const exit = new ExitDriver(stageWith({ abort_options: ['Stop'] }, {}));
    exit.run();
    expect(exit.answer(pick('Stop'))).toEqual({ kind: 'abort', option: 'Stop' });
    expect(exit.visit).toHaveLength(1);
  });

  it('lists a deadline proceed with its point, beside the other notes', () => {
    const exit = new ExitDriver(stageWith({}, {}));
    exit.run();
    expect(exit.answer('expired')).toMatchObject({ kind: 'present', ref: { point: 'p2' } });
    expect(exit.answer(pick('Approve'))).toEqual({ kind: 'approved', notes: ['p2: Approve'], proceeded: [{ point: 'p1', why: 'deadline' }] });
  });
});

describe('nextExitStep: unattended runs', () => {
  it('settles an auto_approve point at once', () => {
    const exit = new ExitDriver(stageWith(review), true);
    expect(exit.run()).toEqual({ kind: 'approved', notes: [], proceeded: [{ point: 'review', why: 'unattended' }] });
    expect(exit.steps[0]).toMatchObject({ kind: 'settle', why: 'unattended', ref: { point: 'review', round: 0, purpose: 'decide' } });
  });

  it('skips a point that is not required, even one that would ask', () => {
    const exit = new ExitDriver(stageWith({ required: false, unattended: 'ask' }), true);
    expect(exit.run()).toEqual({ kind: 'approved', notes: [], proceeded: [{ point: 'p1', why: 'not_required' }] });
  });

  it('presents an ask point like an attended run', () => {
    const exit = new ExitDriver(stageWith({ ...review, unattended: 'ask' }), true);
    expect(exit.run()).toMatchObject({ kind: 'present', ref: { point: 'review', round: 0 } });
    expect(exit.answer(pick('Approve'))).toEqual({ kind: 'approved', notes: ['review: Approve'], proceeded: [] });
  });

  it('fails the run when an ask point expires', () => {
    const exit = new ExitDriver(stageWith({ ...review, unattended: 'ask' }), true);
    exit.run();
    expect(exit.answer('expired')).toEqual({ kind: 'fail', error: expect.stringContaining('checkpoint "review" expired') });
  });

  it('proceeds past an expired auto_approve point that was asked in an attended run', () => {
    const exit = new ExitDriver(stageWith(review), false);
    exit.run();
    exit.answer('expired');
    expect(exit.steps.at(-1)).toEqual({ kind: 'approved', notes: [], proceeded: [{ point: 'review', why: 'deadline' }] });
  });

  it('mixes settled and presented points in declared order', () => {
    const exit = new ExitDriver(stageWith({}, { required: false }, { unattended: 'ask' }), true);
    expect(exit.run()).toMatchObject({ kind: 'present', ref: { point: 'p3' } });
    expect(exit.answer(pick('Approve'))).toEqual({
      kind: 'approved',
      notes: ['p3: Approve'],
      proceeded: [
        { point: 'p1', why: 'unattended' },
        { point: 'p2', why: 'not_required' },
      ],
    });
  });
});

describe('nextExitStep: reading the log', () => {
  const stage = stageWith(review);
  const base = { effectId: 'fx1', prompt: { kind: 'confirm', prompt: 'x' } as const };

  it('reads a checkpoint recorded twice once', () => {
    const decide = { ...base, interactionId: 'ix1', ref: { stage: 'draft', point: 'review', round: 0, purpose: 'decide' as const } };
    const step = nextExitStep({
      stage,
      unattended: false,
      exitEffectId: 'fx1',
      document: 'd',
      visit: [decide, { ...decide, resolution: { outcome: 'answered', answer: pick('Approve') } }],
    });
    expect(step).toEqual({ kind: 'approved', notes: ['review: Approve'], proceeded: [] });
  });

  it('ignores checkpoints of other stages and points no longer declared', () => {
    const stray = (stageName: string, point: string, interactionId: string): VisitCheckpoint => ({
      ...base,
      interactionId,
      ref: { stage: stageName, point, round: 0, purpose: 'decide' },
      resolution: { outcome: 'answered', answer: pick('More detail') },
    });
    const step = nextExitStep({
      stage,
      unattended: false,
      exitEffectId: 'fx2',
      document: '',
      visit: [stray('other', 'review', 'ix1'), stray('draft', 'gone', 'ix2')],
    });
    expect(step).toMatchObject({ kind: 'present', ref: { point: 'review', round: 0 }, prompt: { prompt: 'Is the draft good?' } });
  });

  it('ignores an edit checkpoint not preceded by an edit decision', () => {
    const step = nextExitStep({
      stage,
      unattended: false,
      exitEffectId: 'fx1',
      document: 'd',
      visit: [{ ...base, interactionId: 'ix1', ref: { stage: 'draft', point: 'review', round: 0, purpose: 'edit' } }],
    });
    expect(step).toMatchObject({ kind: 'present', ref: { purpose: 'decide', round: 0 } });
  });

  it('does not count a deadline or an approval of an earlier exit as a round', () => {
    const earlier = (interactionId: string, resolution: VisitCheckpoint['resolution']): VisitCheckpoint => ({
      ...base,
      interactionId,
      ref: { stage: 'draft', point: 'review', round: 0, purpose: 'decide' },
      resolution,
    });
    const step = nextExitStep({
      stage,
      unattended: false,
      exitEffectId: 'fx3',
      document: 'd',
      visit: [earlier('ix1', { outcome: 'expired' }), earlier('ix2', { outcome: 'answered', answer: pick('Approve') })],
    });
    expect(step).toMatchObject({ kind: 'present', ref: { round: 0 } });
  });
});
