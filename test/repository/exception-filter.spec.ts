import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  Catch,
  ConflictException,
  Controller,
  PreconditionFailedException,
  ServiceUnavailableException,
  Get,
  Module,
  Param,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DddKitError, OperationTimeoutError } from '@ddd-kit/core';
import {
  MemoryPrepareKeyFactory,
  PrepareKeyArgumentError,
  PrepareKeyDataLostError,
  PrepareKeyModule,
  PrepareKeyStateError,
} from '@ddd-kit/prepare-key';
import {
  AggregateRoot,
  AggregateStateError,
  DuplicateAggregateError,
  InjectRepository,
  OptimisticLockError,
  RepositoryConfigurationError,
  RepositoryModule,
  UniqueKey,
  UniqueKeyViolationError,
  type IRepository,
} from '@ddd-kit/repository';
import { DddKitExceptionFilter, dddKitHttpException, dddKitHttpStatus } from '@ddd-kit/repository/http';
import { MachineIdLeaseExpiredError, MachineIdReleasedError } from '@ddd-kit/id-generator';

// The optional filter: ddd-kit errors that a request can cause become 400/409 (or 412), the rest
// is Nest's default. The errors are the real ones, thrown by a repository and a PrepareKey.

@UniqueKey('exception-filter-name', (account: Account) => account.name)
class Account extends AggregateRoot<string> {
  name = '';
}

@Controller()
class AccountsController {
  constructor(@InjectRepository(Account) private readonly accounts: IRepository<string, Account>) {}

  @Get('bad-id')
  async badId(): Promise<unknown> {
    return this.accounts.findById({ $ne: null } as never);
  }

  @Get('taken/:name')
  async taken(@Param('name') name: string): Promise<unknown> {
    for (const id of ['a', 'b']) {
      const account = new Account(`${name}-${id}`);
      account.name = name;
      await this.accounts.insert(account);
    }
    return 'two accounts with one name';
  }

  @Get('duplicate/:id')
  async duplicate(@Param('id') id: string): Promise<unknown> {
    await this.accounts.insert(Object.assign(new Account(id), { name: `${id}-1` }));
    await this.accounts.insert(Object.assign(new Account(id), { name: `${id}-2` }));
    return 'inserted twice';
  }

  @Get('stale/:id')
  async stale(@Param('id') id: string): Promise<unknown> {
    await this.accounts.insert(Object.assign(new Account(id), { name: `${id}-s` }));
    const first = (await this.accounts.findById(id))!;
    const second = (await this.accounts.findById(id))!;
    await this.accounts.update(first);
    await this.accounts.update(second);
    return 'both updates won';
  }

  @Get('bad-key')
  async badKey(): Promise<unknown> {
    return new MemoryPrepareKeyFactory().create('k').prepare('', 1);
  }

  @Get('http')
  http(): never {
    throw new BadRequestException('your own 400');
  }

  @Get('config')
  config(): never {
    throw new RepositoryConfigurationError('a setup mistake');
  }

  @Get('crash')
  crash(): never {
    throw new Error('a bug');
  }
}

@Catch()
class IfMatchExceptionFilter extends DddKitExceptionFilter {
  protected override readonly optimisticLockStatus = 412;
}

async function appWith(filter: typeof DddKitExceptionFilter): Promise<INestApplication> {
  @Module({
    imports: [
      PrepareKeyModule.forRoot({ include: [], factory: new MemoryPrepareKeyFactory() }),
      RepositoryModule.forRoot(),
      RepositoryModule.forFeature([Account]),
    ],
    controllers: [AccountsController],
    providers: [{ provide: APP_FILTER, useClass: filter }],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('DddKitExceptionFilter', () => {
  let app: INestApplication;
  let ifMatch: INestApplication;

  beforeAll(async () => {
    app = await appWith(DddKitExceptionFilter);
    ifMatch = await appWith(IfMatchExceptionFilter);
  });

  afterAll(async () => {
    await app.close();
    await ifMatch.close();
  });

  it.each([
    ['an invalid aggregate id', '/bad-id', BadRequestException, 'Account id is not valid'],
    [
      'a bad PrepareKey argument',
      '/bad-key',
      BadRequestException,
      'a value of the request cannot be used as a key (empty, too long, or holding characters that cannot be stored)',
    ],
    [
      'a unique key value that is taken',
      '/taken/zoe',
      ConflictException,
      "the exception-filter-name 'zoe' is already taken",
    ],
    ['an insert of a stored id', '/duplicate/d1', ConflictException, 'Account "d1" already exists'],
    [
      'a lost optimistic lock',
      '/stale/s1',
      ConflictException,
      'Account "s1" is not at version 1: it was changed or deleted; read it again',
    ],
  ])('%s: GET %s is answered as Nest answers its own exception of that status', async (_, path, Exception, message) => {
    const response = await request(app.getHttpServer()).get(path);
    const nest = new Exception(message);
    expect(response.status).toBe(nest.getStatus());
    // Nest's body, key order included: { message, error, statusCode }.
    expect(response.text).toBe(JSON.stringify(nest.getResponse()));
    expect(Object.keys(response.body)).toEqual(['message', 'error', 'statusCode']);
  });

  it("a taken value's 409 names the key and the value, never who holds it", async () => {
    const response = await request(app.getHttpServer()).get('/taken/yan');
    expect(response.status).toBe(409);
    expect(response.body.message).toBe("the exception-filter-name 'yan' is already taken");
    expect(JSON.stringify(response.body)).not.toContain('yan-a');
  });

  it('a subclass answers 412 for a lost optimistic lock (an API taking If-Match), in the same shape', async () => {
    const response = await request(ifMatch.getHttpServer()).get('/stale/s2');
    expect(response.status).toBe(412);
    expect(response.body).toEqual({
      message: 'Account "s2" is not at version 1: it was changed or deleted; read it again',
      error: 'Precondition Failed',
      statusCode: 412,
    });
  });

  it.each(['/bad-id', '/bad-key', '/duplicate/d2', '/stale/s3'])(
    'GET %s: the message names nothing of the server (no method, class, store or helper)',
    async (path) => {
      const { body } = await request(ifMatch.getHttpServer()).get(path);
      expect(body.message).not.toMatch(
        /retryOnConflict|replay|insert|update|PrepareKey|Repository|Error|seal|Redis|PostgreSQL|Mongo|\(\)/,
      );
    },
  );

  it.each([
    ['your own HttpException', '/http', 400, 'your own 400'],
    ['a configuration error', '/config', 500, 'Internal server error'],
    ['any other error', '/crash', 500, 'Internal server error'],
  ])('%s: GET %s is left to Nest’s default (%i)', async (_, path, status, message) => {
    const response = await request(app.getHttpServer()).get(path);
    expect(response.status).toBe(status);
    expect(response.body.message).toBe(message);
  });
});

describe('dddKitHttpException (for an application’s own filter)', () => {
  it('an outage says what a client can do, naming no store, operation or machine ID', () => {
    const unavailable = 'a store the service needs is unavailable (restarting or unreachable); retry later';
    const cases: Array<[unknown, string]> = [
      [new OperationTimeoutError('prepare-key redis prepare', 3_000), unavailable],
      [Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }), unavailable],
      [new PrepareKeyDataLostError('username'), 'the service is restoring its data; retry later'],
      [new MachineIdLeaseExpiredError(3, 61_000), 'the service cannot issue identifiers right now; retry later'],
    ];
    for (const [error, message] of cases) {
      const exception = dddKitHttpException(error)!;
      expect(exception).toBeInstanceOf(ServiceUnavailableException);
      expect(exception.getResponse()).toEqual({ message, error: 'Service Unavailable', statusCode: 503 });
      expect(exception.cause).toBe(error);
    }
    expect(dddKitHttpException(new OptimisticLockError('Account', 'a', 1), 412)).toBeInstanceOf(
      PreconditionFailedException,
    );
    expect(dddKitHttpException(new Error('a bug'))).toBeUndefined();
  });
});

describe('dddKitHttpStatus (for an application’s own filter)', () => {
  it('maps each error, and nothing else', () => {
    expect(dddKitHttpStatus(new OptimisticLockError('Account', 'a', 1))).toBe(409);
    expect(dddKitHttpStatus(new OptimisticLockError('Account', 'a', 1), 412)).toBe(412);
    expect(dddKitHttpStatus(new UniqueKeyViolationError('email', 'x@y'))).toBe(409);
    expect(dddKitHttpStatus(new DuplicateAggregateError('Account', 'a'))).toBe(409);
    expect(dddKitHttpStatus(new AggregateStateError('Account', 'a', 'deleted'))).toBe(409);
    expect(dddKitHttpStatus(new RepositoryConfigurationError('x'))).toBeUndefined();
    expect(dddKitHttpStatus(new Error('x'))).toBeUndefined();
    expect(dddKitHttpStatus('not an error')).toBeUndefined();
  });

  it('PostgreSQL out of reach, or a machine ID that cannot be vouched for, is a 503: an outage, not a bug', () => {
    const fatal = (code: string) => Object.assign(new Error('terminating connection'), { code, severity: 'FATAL' });
    expect(dddKitHttpStatus(fatal('57P01'))).toBe(503);
    expect(dddKitHttpStatus(fatal('57P03'))).toBe(503);
    expect(dddKitHttpStatus(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(503);
    expect(dddKitHttpStatus(new Error('Connection terminated unexpectedly'))).toBe(503);
    expect(dddKitHttpStatus(new MachineIdLeaseExpiredError(3, 61_000))).toBe(503);
    expect(dddKitHttpStatus(new MachineIdReleasedError(3))).toBe(503);
    // What the server says about the statement itself stays a 500.
    expect(
      dddKitHttpStatus(Object.assign(new Error('syntax error'), { code: '42601', severity: 'ERROR' })),
    ).toBeUndefined();
  });

  it('maps by the stable code, not the class: an error of another package (or copy) with that code, yes; a look-alike name, no', () => {
    class StateFromElsewhere extends DddKitError {
      override readonly code = 'PREPARE_KEY_STATE';
    }
    expect(dddKitHttpStatus(new StateFromElsewhere('held by another value'))).toBe(409);
    expect(dddKitHttpStatus(new PrepareKeyStateError('sku', 'a', 'b'))).toBe(409);
    expect(dddKitHttpStatus(new PrepareKeyArgumentError('bad key'))).toBe(400);
    expect(dddKitHttpStatus(Object.assign(new Error('x'), { name: 'PrepareKeyStateError' }))).toBeUndefined();
    expect(dddKitHttpStatus(Object.assign(new Error('x'), { code: 'PREPARE_KEY_STATE' }))).toBeUndefined();
  });
});
