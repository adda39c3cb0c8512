import { Module } from '@nestjs/common';
import { IdGeneratorModule } from '@ddd-kit/id-generator';
import {
  MemoryPrepareKeyFactory,
  PrepareKeyModule,
} from '@ddd-kit/prepare-key';
import { RepositoryModule } from '@ddd-kit/repository';
import { AppController } from './app.controller.js';
import { AppService, User } from './app.service.js';

@Module({
  imports: [
    PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() }), // where reservations live
    IdGeneratorModule.forRoot(), // ids for new aggregates
    RepositoryModule.forRoot(), // in-memory repositories
    RepositoryModule.forFeature([User]),
  ],
  controllers: [AppController],
  providers: [AppService],
})
export class AppModule {}
