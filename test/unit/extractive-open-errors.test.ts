/**
 * Which errors the extractive checkpoint still lists as open (shared/extractive/same-error.ts,
 * moved-past.ts): an error fixed through one call is fixed wherever it showed before; a one-off
 * call's failure is behind the agent once the project's tests pass after it; a build command not
 * run again is behind once another build of the project passes. An agent resuming
 * from the checkpoint must not chase errors the session already got past, and must still see the
 * ones it did not.
 */
import { describe, expect, it } from 'vitest';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { errorSignature } from '../../shared/extractive/same-error.ts';
import { commandKind } from '../../shared/extractive/threads.ts';
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

describe('a build not run again is behind once another build of the project passes', () => {
  const TSC_ERROR = "src/cart.ts(12,7): error TS2322: Type 'string' is not assignable to type 'number'.";

  it('drops the type-check failure when the project build passes later', () => {
    const { messages } = transcript()
      .user('Add the discount field to the cart')
      .bash('npx tsc --noEmit', TSC_ERROR, 2)
      .bash("sed -i 's/discount = input/discount = Number(input)/' src/cart.ts", '', 0)
      .bash('npm run build', 'vite v5.4.0 building for production...\n✓ built in 1.2s', 0);
    expect(blockers(messages)).toEqual([]);
    expect(fixes(messages).join('\n')).toMatch(/TS2322.* → moved past: `npm run build` passed later/);
  });

  it('keeps it when only tests passed after it, or when it failed again after the build', () => {
    const testsOnly = transcript()
      .user('Add the discount field to the cart')
      .bash('npx tsc --noEmit', TSC_ERROR, 2)
      .bash('npx vitest run src/cart.test.ts', ' ✓ src/cart.test.ts (3 tests)\n Tests  3 passed (3)', 0);
    expect(blockers(testsOnly.messages).join('\n')).toMatch(/TS2322/);
    const failedAgain = transcript()
      .user('Add the discount field to the cart')
      .bash('npx tsc --noEmit', TSC_ERROR, 2)
      .bash('npm run build', '✓ built in 1.2s', 0)
      .bash('npx tsc --noEmit', TSC_ERROR, 2);
    expect(blockers(failedAgain.messages).join('\n')).toMatch(/TS2322/);
  });

  it("classes a package runner's command by the tool it runs", () => {
    expect(commandKind('npx tsc --noEmit')).toBe('build');
    expect(commandKind('bunx eslint src')).toBe('build');
    expect(commandKind('pnpm dlx vitest run')).toBe('test');
    expect(commandKind('npx -y ts-node scripts/seed.ts')).toBe('run');
    expect(commandKind('npx prisma migrate dev')).toBeNull();
  });

  it("drops a package runner's one-time tool failure once a build passes after it", () => {
    const { messages } = transcript()
      .user('Add the orders table')
      .bash(
        'npx prisma migrate dev --name orders',
        "Error: P1001: Can't reach database server at `localhost:5432`",
        1,
      )
      .bash('npm run build', '✓ built in 1.2s', 0);
    expect(blockers(messages)).toEqual([]);
    expect(fixes(messages).join('\n')).toMatch(/P1001.* → moved past: `npm run build`/);
  });
});
