/**
 * Which errors the extractive checkpoint still lists as open (shared/extractive/same-error.ts,
 * moved-past.ts): an error fixed through one call is fixed wherever it showed before; a one-off
 * call's failure is behind the agent once the project's tests pass after it. An agent resuming
 * from the checkpoint must not chase errors the session already got past, and must still see the
 * ones it did not.
 */
import { describe, expect, it } from 'vitest';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { errorSignature } from '../../shared/extractive/same-error.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;
const blockers = (messages: Parameters<typeof extractCheckpoint>[1]) =>
  extractCheckpoint(null, messages, BIG).blockers.map((b) => b.text);
const fixes = (messages: Parameters<typeof extractCheckpoint>[1]) =>
  extractCheckpoint(null, messages, BIG).errorsAndFixes.map((e) => `${e.error} → ${e.fix}`);
const TRACE = 'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n';

describe('an error fixed through one call is fixed wherever it showed before', () => {
  const failures = () =>
    transcript()
      .user('Saving an order loses its product')
      .bash(
        'python debug_save.py',
        `${TRACE}django.db.utils.IntegrityError: FOREIGN KEY constraint failed`,
        1,
      )
      .bash('python check_fields.py', `${TRACE}sqlite3.IntegrityError: FOREIGN KEY constraint failed`, 1);

  it('drops the twins of an error once a later run of one of its calls passes', () => {
    const { messages } = failures()
      .bash('python try_fix.py', `${TRACE}Error: FOREIGN KEY constraint failed`, 1)
      .bash('python try_fix.py', 'saved: order 1, product foo', 0);
    expect(blockers(messages)).toEqual([]);
    expect(fixes(messages).some((f) => /FOREIGN KEY constraint failed → the same error/.test(f))).toBe(true);
  });

  it('keeps them when the error shows again after the fix, or was never fixed', () => {
    expect(blockers(failures().messages)).toHaveLength(2);
    const { messages } = failures()
      .bash('python try_fix.py', `${TRACE}Error: FOREIGN KEY constraint failed`, 1)
      .bash('python try_fix.py', 'saved: order 1, product foo', 0)
      .bash('python other_case.py', `${TRACE}sqlite3.IntegrityError: FOREIGN KEY constraint failed`, 1);
    expect(blockers(messages).join('\n')).toMatch(
      /FOREIGN KEY constraint failed \(from: python other_case\.py\)/,
    );
  });

  it('compares the message without its exception type, and never a message that names no error', () => {
    expect(errorSignature('sqlite3.IntegrityError: FOREIGN KEY constraint failed (from: python a.py)')).toBe(
      errorSignature('Error: FOREIGN KEY constraint failed'),
    );
    expect(errorSignature('exit code 1 (from: make)')).toBeNull();
    expect(errorSignature('Python traceback (from: python a.py)')).toBeNull();
    expect(errorSignature('failed')).toBeNull();
  });
});

describe("a one-off call's failure is behind once the project's tests pass after it", () => {
  const debugScript =
    "cat > debug_lexer.py << 'EOF'\nfrom app.lexer import Lexer\nLexer(config=1)\nEOF\npython debug_lexer.py";

  it('drops the failure of a script written and run in one call when the tests pass later', () => {
    const { messages } = transcript()
      .user('Fix the double semicolon crash')
      .bash(debugScript, `${TRACE}AttributeError: 'Dialect' object has no attribute 'get'`, 1)
      .bash("sed -i 's/a/b/' src/app/lexer.py", '', 0)
      .bash('python -m pytest tests/test_lexer.py', '5 passed in 0.2s', 0);
    expect(blockers(messages)).toEqual([]);
    expect(fixes(messages).join('\n')).toMatch(
      /'Dialect' object has no attribute 'get' → moved past: `.*pytest/,
    );
  });

  it("keeps it when no test or build passed after it, and keeps a project command's failure", () => {
    const noTests = transcript()
      .user('Fix the double semicolon crash')
      .bash('python -m pytest tests/test_lexer.py', '5 passed in 0.2s', 0)
      .bash(debugScript, `${TRACE}AttributeError: 'Dialect' object has no attribute 'get'`, 1);
    expect(blockers(noTests.messages).join('\n')).toMatch(/'Dialect' object has no attribute 'get'/);
    const reproduction = transcript()
      .user('Fix the double semicolon crash')
      .bash('python reproduce_issue.py', `${TRACE}RuntimeError: Dropped elements in sequence matching`, 1)
      .bash('python -m pytest tests/test_lexer.py', '5 passed in 0.2s', 0);
    expect(blockers(reproduction.messages).join('\n')).toMatch(/Dropped elements in sequence matching/);
  });
});
