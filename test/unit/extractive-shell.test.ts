/**
 * Reading the scripts an agent writes and runs (shared/text/shell.ts): which files a script's
 * text writes, by literal path, so that a summary can say `pkg/mod.py` was rewritten by
 * `python fix.py`; a script that only reads writes nothing.
 */
import { describe, expect, it } from 'vitest';
import { heredocs, scriptWrites } from '../../shared/text/shell.ts';

describe('the files a script writes', () => {
  it('reads the Python script an agent writes to patch a source file', () => {
    const script = [
      'import re',
      "with open('astropy/modeling/separable.py', 'r') as f:",
      '    content = f.read()',
      "content = content.replace('= 1', '= right')",
      "with open('astropy/modeling/separable.py', 'w') as f:",
      '    f.write(content)',
      'print("Fixed _cstack function")',
    ].join('\n');
    expect(scriptWrites(script)).toEqual(['astropy/modeling/separable.py']);
  });

  it('takes every mode that writes, positional or by keyword, and pathlib and Node writes', () => {
    const script = [
      'open("out/a.txt", "a")',
      "open('b.bin', 'wb')",
      "open('c.py', 'r+')",
      "open('d.csv', 'x')",
      "open('e.py', encoding='utf-8', mode='w')",
      "Path('pkg/mod.py').write_text(new)",
      "pathlib.Path('f.bin').write_bytes(b'')",
      "fs.writeFileSync('src/index.js', code);",
      'fs.appendFileSync("log.txt", line);',
      "await fs.promises.writeFile('g.json', data);",
    ].join('\n');
    expect(scriptWrites(script)).toEqual([
      'out/a.txt',
      'b.bin',
      'c.py',
      'd.csv',
      'e.py',
      'pkg/mod.py',
      'f.bin',
      'src/index.js',
      'log.txt',
      'g.json',
    ]);
  });

  it('writes nothing for a script that only reads, and leaves out paths built at run time', () => {
    const reads = [
      "with open('setup.py') as f: print(f.read())",
      "open('a.py', 'r').read()",
      "open('b.py', 'rb')",
      "open('c.py', encoding='utf-8')",
      "Path('d.py').read_text()",
      "fs.readFileSync('e.js', 'utf8')",
    ].join('\n');
    expect(scriptWrites(reads)).toEqual([]);
    const built = [
      "open(path, 'w')",
      "open(f'{name}.py', 'w')",
      "open(os.path.join('pkg', 'a.py'), 'w')",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the script's own template literal
      'fs.writeFileSync(`${dir}/x.js`, code)',
      'fs.writeFileSync(target, code)',
    ].join('\n');
    expect(scriptWrites(built)).toEqual([]);
  });

  it('names a file written twice once, in the order the script first writes it', () => {
    const script = "open('b.py', 'w').write(x)\nopen('a.py', 'w')\nopen('b.py', 'a')";
    expect(scriptWrites(script)).toEqual(['b.py', 'a.py']);
  });
});

describe('the here-documents of a command', () => {
  it('reads each head and body, up to the line holding the delimiter alone or the end', () => {
    const command = [
      "cat > fix.py << 'EOF'",
      'import re',
      '  EOF in a line is not the end',
      'EOF',
      'python fix.py',
      'python3 - <<-"PY"',
      'print(1)',
      '  PY  ',
      'cat <<<"a here-string" | tee out.txt',
      'cat > b.sh <<END',
      'echo never closed',
    ].join('\n');
    expect(heredocs(command)).toEqual([
      { head: "cat > fix.py << 'EOF'", body: 'import re\n  EOF in a line is not the end' },
      { head: 'python3 - <<-"PY"', body: 'print(1)' },
      { head: 'cat > b.sh <<END', body: 'echo never closed' },
    ]);
  });

  it('reads thousands of here-documents in one command, each with its own body', () => {
    const docs = Array.from({ length: 5_000 }, (_, i) => `cat > s${i}.py <<EOF\nprint(${i})\nEOF`);
    const found = heredocs(docs.join('\n'));
    expect(found).toHaveLength(5_000);
    expect(found[4_999]).toEqual({ head: 'cat > s4999.py <<EOF', body: 'print(4999)' });
  });
});
