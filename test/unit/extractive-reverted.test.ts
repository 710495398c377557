/**
 * Work undone later is not completed work (shared/extractive/reverted.ts): a file restored from
 * version control or a backup, an edit swapped back, the user asking to undo the last change.
 */
import { describe, expect, it } from 'vitest';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { restoredPaths } from '../../shared/extractive/reverted.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;
const texts = (entries: Array<{ text: string }>) => entries.map((e) => e.text);
const edit = (path: string, from: string, to: string) =>
  [
    'Edit',
    { file_path: path, old_string: from, new_string: to },
    `The file ${path} has been updated.`,
  ] as const;

describe('what a shell command restores', () => {
  it('reads git checkout, restore, stash, reset and backups', () => {
    expect(restoredPaths('cd /repo && git checkout -- lib/util.rb')).toEqual(['lib/util.rb']);
    expect(restoredPaths('git checkout lib/util.rb lib/core.rb')).toEqual(['lib/util.rb', 'lib/core.rb']);
    expect(restoredPaths('git restore .')).toBeNull();
    expect(restoredPaths('git reset --hard HEAD')).toBeNull();
    expect(restoredPaths('git stash')).toBeNull();
    expect(restoredPaths('cp conf/app.ini.bak conf/app.ini')).toEqual(['conf/app.ini']);
  });

  it('does not take branch switches, staged-only restores or stash reads for reverts', () => {
    expect(restoredPaths('git checkout feature/login')).toBeUndefined();
    expect(restoredPaths('git checkout -b fix-1')).toBeUndefined();
    expect(restoredPaths('git restore --staged lib/util.rb')).toBeUndefined();
    expect(restoredPaths('git stash list')).toBeUndefined();
    expect(restoredPaths('git status')).toBeUndefined();
  });
});

describe('reverted work is not completed', () => {
  it('drops an edit whose file a later git checkout restored, keeps the others', () => {
    const { messages } = transcript()
      .user('Speed up the loader')
      .tool(...edit('lib/loader.rb', 'each', 'each_slice(50)'))
      .tool(...edit('lib/cache.rb', 'ttl = 5', 'ttl = 60'))
      .bash('git checkout -- lib/loader.rb', '', 0);
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.completed)).toContain('edited lib/cache.rb');
    expect(texts(c.completed).join('\n')).not.toContain('lib/loader.rb');
  });

  it('drops every change before a hard reset, but not changes made after it', () => {
    const { messages } = transcript()
      .user('Try the new parser')
      .tool(...edit('src/parse.go', 'old', 'new'))
      .bash('git reset --hard', 'HEAD is now at 1a2b3c', 0)
      .tool(...edit('src/lex.go', 'a', 'b'));
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.completed)).toEqual(['edited src/lex.go']);
  });

  it('drops an edit that a later edit swapped back', () => {
    const { messages } = transcript()
      .user('Rename the flag')
      .tool(...edit('cmd/main.go', '--verbose', '--debug'))
      .tool(...edit('cmd/main.go', '--debug', '--verbose'));
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.completed).join('\n')).not.toContain('cmd/main.go');
  });

  it('drops the last turn changes when the user asks to undo them, in several languages', () => {
    for (const ask of ['Please revert that.', 'Mach das bitte rückgängig', 'Annule ça', 'Deshaz el cambio']) {
      const { messages } = transcript()
        .user('Clean up the styles')
        .tool(...edit('web/site.css', 'red', 'blue'))
        .user('Also add a footer')
        .tool(...edit('web/footer.html', '', '<footer/>'))
        .user(ask);
      const c = extractCheckpoint(null, messages, BIG);
      expect(texts(c.completed), ask).toEqual(['edited web/site.css']);
    }
  });

  it('keeps the work when the user says not to undo it', () => {
    const { messages } = transcript()
      .user('Clean up the styles')
      .tool(...edit('web/site.css', 'red', 'blue'))
      .user("Don't revert that, it looks fine.");
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.completed)).toEqual(['edited web/site.css']);
  });

  it('drops a previous checkpoint item when these messages restore its file', () => {
    const previous = { ...emptyCheckpoint(), completed: [{ text: 'edited app/models.py', seq: 3 }] };
    let t = transcript();
    for (let i = 0; i < 10; i++) t = t.assistant(`step ${i}`);
    const { messages } = t.bash('git restore app/models.py', '', 0);
    const c = extractCheckpoint(previous, messages.slice(10), BIG);
    expect(texts(c.completed).join('\n')).not.toContain('app/models.py');
    expect(texts(c.decisions)).toEqual(['undid the changes to app/models.py: `git restore app/models.py`']);
  });
});
