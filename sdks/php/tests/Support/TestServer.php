<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

use Pagamentos\Client;

/**
 * The repository's API server, really running: the compiled CLI's `serve`, as `npm start` runs it
 * (apps/server/dist/cli.js: the package's test script builds it when stale), on a free port (PORT=0) with a
 * temporary SQLite database, started once per test run (and a second one, differently
 * configured, for the tests that need it).
 */
final class TestServer
{
    private static ?self $main = null;

    private function __construct(
        public readonly string $baseUrl,
        public readonly string $secretKey,
        public readonly Process $process,
    ) {
    }

    /** The server most tests share, started on first use. */
    public static function main(): self
    {
        return self::$main ??= self::start();
    }

    /** @param array<string, string> $settings environment variables for this server */
    public static function start(array $settings = []): self
    {
        $dir = Process::tempDir('pagamentos-php-server-');
        $env = Process::environment();
        unset($env['NODE_ENV'], $env['PORT'], $env['DATABASE_URL']);
        $env = array_merge($env, [
            'PORT' => '0',
            'HOST' => '127.0.0.1',
            'DATABASE_URL' => 'sqlite:' . $dir . '/payments.db',
            'LOG_FILE' => $dir . '/server.log',
            'LOG_LEVEL' => 'warn',
            // Sandbox deliveries to this machine's php -S (allowed outside production).
            'WEBHOOK_ALLOW_PRIVATE_URLS' => 'true',
        ], $settings);
        $root = dirname(__DIR__, 4);
        $process = new Process(['node', '--enable-source-maps', 'apps/server/dist/cli.js', 'serve'], $dir, $root, $env);
        [$port, $key] = $process->waitFor(static function () use ($dir): ?array {
            $out = (string) @file_get_contents($dir . '/stdout');
            if (
                preg_match('#listening on https?://[^:\s]+:(\d+)#', $out, $port) === 1
                && preg_match('/Sandbox secret key: (sk_test_\S+)/', $out, $key) === 1
            ) {
                return [$port[1], $key[1]];
            }
            return null;
        }, 'server start');
        return new self('http://127.0.0.1:' . $port, $key, $process);
    }

    /** @param array<string, mixed> $options */
    public function client(array $options = [], ?string $key = null): Client
    {
        return new Client($key ?? $this->secretKey, $options + ['baseUrl' => $this->baseUrl]);
    }

    /**
     * Applies a chargeback's stage to a payment through the server's own dispute service (a
     * sandbox has no acquirer to send one): tests/Support/dispute-stage.mjs, on this server's
     * database. Returns whether it changed anything.
     */
    public function applyDisputeStage(string $paymentId, string $ref, int $rank, string $status): bool
    {
        $root = dirname(__DIR__, 4);
        $command = [
            'node', '--import', 'tsx', 'sdks/php/tests/Support/dispute-stage.mjs',
            $this->process->dir . '/payments.db', $paymentId, $ref, (string) $rank, $status,
        ];
        $pipes = [];
        $proc = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        if (!is_resource($proc)) {
            throw new \RuntimeException('Could not start node for dispute-stage.mjs.');
        }
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        if (proc_close($proc) !== 0) {
            throw new \RuntimeException('dispute-stage.mjs failed: ' . $err);
        }
        return trim($out) === 'applied';
    }

    /**
     * A new sandbox merchant account of its own (POST /v1/sandbox/accounts), for tests that
     * count what an account holds.
     *
     * @return array{secretKey: string, publishableKey: string}
     */
    public function newAccount(): array
    {
        $handle = curl_init($this->baseUrl . '/v1/sandbox/accounts');
        curl_setopt_array($handle, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => '{"name":"PHP SDK tests"}',
            CURLOPT_HTTPHEADER => ['Content-Type: application/json'],
            CURLOPT_RETURNTRANSFER => true,
        ]);
        $body = (string) curl_exec($handle);
        $created = json_decode($body, true);
        if (!is_string($created['keys']['secretKey']['key'] ?? null)) {
            throw new \RuntimeException('Sandbox sign-up failed: ' . $body);
        }
        return [
            'secretKey' => $created['keys']['secretKey']['key'],
            'publishableKey' => $created['keys']['publishableKey']['key'],
        ];
    }
}
