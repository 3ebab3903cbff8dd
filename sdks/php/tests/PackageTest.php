<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use PHPUnit\Framework\TestCase;

/**
 * What the package promises to merchants who install it: no dependencies, PSR-4 as declared,
 * init.php loading every class without Composer.
 */
final class PackageTest extends TestCase
{
    private const ROOT = __DIR__ . '/..';

    public function testComposerJsonRequiresOnlyPhpAndItsExtensions(): void
    {
        $composer = json_decode(
            (string) file_get_contents(self::ROOT . '/composer.json'),
            true,
            512,
            JSON_THROW_ON_ERROR,
        );
        self::assertSame(['php' => '>=8.2', 'ext-curl' => '*', 'ext-json' => '*'], $composer['require']);
        self::assertArrayNotHasKey('require-dev', $composer);
        self::assertSame(['Pagamentos\\' => 'src/'], $composer['autoload']['psr-4']);
    }

    public function testComposerJsonHasTheLicenseOfTheTypeScriptSdk(): void
    {
        $composer = json_decode(
            (string) file_get_contents(self::ROOT . '/composer.json'),
            true,
            512,
            JSON_THROW_ON_ERROR,
        );
        $sdk = json_decode(
            (string) file_get_contents(self::ROOT . '/../../packages/sdk/package.json'),
            true,
            512,
            JSON_THROW_ON_ERROR,
        );
        self::assertIsString($sdk['license'] ?? null);
        self::assertSame($sdk['license'], $composer['license'] ?? null);
    }

    public function testEveryClassIsWhereItsNameSaysAndInitPhpLoadsItInAFreshProcess(): void
    {
        $files = new \RecursiveIteratorIterator(
            new \RecursiveDirectoryIterator(self::ROOT . '/src', \FilesystemIterator::SKIP_DOTS),
        );
        $classes = [];
        foreach ($files as $file) {
            $relative = substr($file->getPathname(), strlen(self::ROOT . '/src/'), -strlen('.php'));
            $class = 'Pagamentos\\' . str_replace('/', '\\', $relative);
            $source = (string) file_get_contents($file->getPathname());
            self::assertMatchesRegularExpression(
                '/^namespace ' . preg_quote(substr($class, 0, strrpos($class, '\\')), '/') . ';$/m',
                $source,
                $relative,
            );
            $declares = '/^(final |abstract )?(class|interface) ' . basename($relative) . '\b/m';
            self::assertMatchesRegularExpression($declares, $source);
            $classes[] = $class;
        }
        self::assertGreaterThan(30, count($classes));

        // In a process of its own, with nothing but init.php: every class loads.
        $script = sprintf(
            'require %s; foreach (%s as $c) { if (!class_exists($c) && !interface_exists($c)) { echo "missing $c"; '
            . 'exit(1); } } echo "ok";',
            var_export(realpath(self::ROOT . '/init.php'), true),
            var_export($classes, true),
        );
        exec(escapeshellarg(PHP_BINARY) . ' -r ' . escapeshellarg($script) . ' 2>&1', $output, $status);
        self::assertSame(0, $status, implode("\n", $output));
        self::assertSame(['ok'], $output);
    }
}
