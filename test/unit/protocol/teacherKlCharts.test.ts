// The metrics panel's KL chart of distillation and KL-penalty runs: present only when the run logs
// teacher_kl or kl_policy_base, with one series per dataset when there are several teachers.
import * as assert from 'assert';
import { teacherKlCharts } from '../../../src/protocol/metricsProtocol';

describe('teacher-KL chart', () => {
  it('none for a plain GRPO run', () => {
    assert.deepStrictEqual(teacherKlCharts(['env/all/reward/total', 'optim/kl_sample_train_v1']), []);
  });
  it('one series for one teacher; one per dataset for several', () => {
    const [one] = teacherKlCharts(['teacher_kl', 'teacher_kl/dataset_0']);
    assert.deepStrictEqual(one!.series.map((s) => s.key), ['teacher_kl']);
    assert.strictEqual(one!.title, 'KL to the teacher');
    const [multi] = teacherKlCharts(['teacher_kl/dataset_1', 'teacher_kl', 'teacher_kl/dataset_0']);
    assert.deepStrictEqual(multi!.series.map((s) => [s.key, s.label]), [['teacher_kl', 'teacher KL'], ['teacher_kl/dataset_0', 'dataset 0'], ['teacher_kl/dataset_1', 'dataset 1']]);
  });
  it("the KL penalty's kl_policy_base", () => {
    const [c] = teacherKlCharts(['kl_policy_base']);
    assert.deepStrictEqual([c!.id, c!.title, c!.series.map((s) => s.key)], ['teacher-kl', 'KL to the reference model', ['kl_policy_base']]);
  });
});
