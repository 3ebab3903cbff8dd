<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Tests\Support\PhpServer;
use Pagamentos\Tests\Support\Process;
use Pagamentos\Tests\Support\TestServer;

/**
 * The README's PHP examples, run as they are written (with the SDK loaded through init.php in
 * place of Composer's autoloader) against the running server.
 */
final class DocsTest extends TestCase
{
    private const REQUIRES = [
        "require_once __DIR__ . '/vendor/autoload.php';",
        "require_once __DIR__ . '/lib/pagamentos-php/init.php';",
    ];

    /** @return list<string> the README's ```php blocks */
    private static function blocks(): array
    {
        $readme = (string) file_get_contents(__DIR__ . '/../README.md');
        preg_match_all('/```php\n(.*?)```/s', $readme, $matches);
        return $matches[1];
    }

    private static function block(string $containing): string
    {
        $found = array_values(array_filter(
            self::blocks(),
            static fn (string $block) => str_contains($block, $containing),
        ));
        self::assertCount(1, $found, 'one README block with ' . $containing);
        return $found[0];
    }

    /** The block as a file, its require of the SDK pointed at this checkout's init.php. */
    private static function file(string $code): string
    {
        $init = var_export(realpath(__DIR__ . '/../init.php'), true);
        $count = 0;
        $code = str_replace(self::REQUIRES, 'require_once ' . $init . ';', $code, $count);
        self::assertSame(1, $count, "the block loads the SDK once:\n" . $code);
        $file = Process::tempDir('pagamentos-php-docs-') . '/example.php';
        file_put_contents($file, $code);
        return $file;
    }

    /** @return array{int, string} exit code, output */
    private static function runExample(string $code): array
    {
        $server = TestServer::main();
        $env = array_merge(Process::environment(), [
            'PAGAMENTOS_SECRET_KEY' => $server->secretKey,
            'PAGAMENTOS_BASE_URL' => $server->baseUrl,
        ]);
        $pipes = [];
        $process = proc_open(
            [PHP_BINARY, self::file($code)],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            null,
            $env,
        );
        self::assertIsResource($process);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        return [proc_close($process), (string) $out];
    }

    public function testEveryBlockIsValidPhp(): void
    {
        $blocks = self::blocks();
        self::assertGreaterThanOrEqual(6, count($blocks));
        foreach ($blocks as $code) {
            $file = Process::tempDir('pagamentos-php-lint-') . '/block.php';
            file_put_contents($file, $code);
            exec(escapeshellarg(PHP_BINARY) . ' -l ' . escapeshellarg($file) . ' 2>&1', $output, $status);
            self::assertSame(0, $status, implode("\n", $output) . "\n" . $code);
        }
    }

    public function testTheInstallWithoutComposerBlockRuns(): void
    {
        [$status, $out] = self::runExample(self::block("lib/pagamentos-php/init.php';\n\n\$client"));
        self::assertSame(0, $status, $out);
    }

    public function testTheQuickStartRuns(): void
    {
        [$status, $out] = self::runExample(self::block("'order-1234'"));
        self::assertSame(0, $status, $out);
        self::assertMatchesRegularExpression("/^pay_\\w+ pending\n(visa 4242)\n$/", $out);
    }

    public function testTheUsageBlockRuns(): void
    {
        [$status, $out] = self::runExample(self::block('autoPaging()'));
        self::assertSame(0, $status, $out);
        self::assertStringContainsString("canceled\n", $out);
        self::assertMatchesRegularExpression('/^ref_\w+ 500$/m', $out);
        self::assertMatchesRegularExpression('/^rcp_\w+ 11222333000181$/m', $out);
        self::assertMatchesRegularExpression('/^200 req_\w+$/m', $out);
        self::assertMatchesRegularExpression('/^\d events$/m', $out);
    }

    public function testTheErrorsBlockRuns(): void
    {
        [$status, $out] = self::runExample(self::block('catch (InvalidRequestException $e)'));
        self::assertSame(0, $status, $out);
        self::assertMatchesRegularExpression('/^VALIDATION_ERROR amountInCents: /', $out);
    }

    public function testTheTestingYourHandlerBlockRuns(): void
    {
        [$status, $out] = self::runExample(self::block('Webhook::sign('));
        self::assertSame(0, $status, $out);
        self::assertSame("webhook.test\n", $out);
    }

    public function testThePlainPhpWebhookExampleVerifiesRealDeliveriesAndRefusesForgeries(): void
    {
        $server = TestServer::main();
        $client = $server->client([], $server->newAccount()['secretKey']);
        $endpoint = $client->request('POST', '/v1/webhook-endpoints', [
            'url' => 'https://example.com/not-yet',
            'events' => ['payment.created'],
        ])->json();

        $hook = PhpServer::start(self::file(self::block("file_get_contents('php://input')")), [
            'PAGAMENTOS_WEBHOOK_SECRET' => $endpoint['secret'],
        ]);
        $path = '/v1/webhook-endpoints/' . $endpoint['id'];
        $client->request('PATCH', $path, ['url' => $hook->baseUrl . '/webhook.php']);

        $payment = $client->payments->create(['amountInCents' => 1234, 'method' => 'pix']);
        $log = $hook->process->waitFor(
            static fn (): ?string => preg_match(
                '/webhook payment\.created (evt_\w+)/',
                $hook->process->output(),
                $m,
            ) === 1 ? $m[1] : null,
            'the example to log the delivery',
        );
        $delivery = self::eventually(static function () use ($client, $endpoint, $log): ?array {
            $deliveries = $client->request('GET', '/v1/webhook-endpoints/' . $endpoint['id'] . '/deliveries', [
                'eventId' => $log,
            ])->json()['data'];
            return ($deliveries[0]['status'] ?? null) === 'succeeded' ? $deliveries[0] : null;
        }, 'a succeeded delivery');
        self::assertSame(204, $delivery['lastResponseCode']);
        $event = $client->request('GET', '/v1/events/' . $log)->json();
        self::assertSame($payment->id, $event['data']['object']['id']);

        // A forged delivery: signed with another secret.
        $payload = json_encode($event);
        $forged = \Pagamentos\Webhook::sign($payload, 'whsec_' . base64_encode(random_bytes(24)), $event['id']);
        $handle = curl_init($hook->baseUrl . '/webhook.php');
        curl_setopt_array($handle, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => $payload,
            CURLOPT_HTTPHEADER => array_map(
                static fn (string $name, string $value) => $name . ': ' . $value,
                array_keys($forged),
                $forged,
            ),
            CURLOPT_RETURNTRANSFER => true,
        ]);
        curl_exec($handle);
        self::assertSame(400, curl_getinfo($handle, CURLINFO_RESPONSE_CODE));
        self::assertStringContainsString('webhook refused: No signature matches', $hook->process->output());
    }
}
